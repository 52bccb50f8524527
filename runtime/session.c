/*
 * session.c -- dg_session: devices, Variables, feeds, runners
 * (placeholder: being written).
 */
#include "session.h"

#include <stdio.h>

dgr_value *dgr_session_variable(struct dgr_session *s, int32_t node_id)
{
    (void)s;
    (void)node_id;
    return NULL;
}

const dgr_value *dgr_session_feed(struct dgr_session *s, int32_t node_id)
{
    (void)s;
    (void)node_id;
    return NULL;
}

uint64_t dgr_session_rng_seed(struct dgr_session *s, int32_t node_id)
{
    (void)s;
    return (uint64_t)node_id;
}

void dgr_session_print(struct dgr_session *s, const char *text)
{
    (void)s;
    fputs(text, stderr);
}
