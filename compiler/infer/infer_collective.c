/*
 * infer_collective.c -- inference of the replication ops (issue 13, SPEC
 * 8.4): AllReduce and Broadcast keep their input's type (and check their
 * attrs: the reduction's name, roots >= 0), ReplicaIndex is an int32
 * scalar.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

int dgc_allreduce_reduction(const char *s)
{
    static const char *const names[] = {"sum", "mean", "max", "min"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static int one_input(const dgc_ttype *in, int n_in, dgc_ttype *out,
                     char *msg, size_t msgsz)
{
    if (n_in != 1) {
        snprintf(msg, msgsz, "expects 1 input, got %d", n_in);
        return -1;
    }
    out[0] = in[0];
    return 0;
}

int dgc_infer_allreduce(DGC_INFER_ARGS)
{
    const dgc_attr *r = dgc_node_attr(n, "reduction");
    if (!r || !r->s || dgc_allreduce_reduction(r->s) < 0) {
        snprintf(msg, msgsz, "AllReduce needs attr 'reduction': \"sum\", "
                 "\"mean\", \"max\" or \"min\"%s%.40s%s",
                 r && r->s ? " (got \"" : "", r && r->s ? r->s : "",
                 r && r->s ? "\")" : "");
        return -1;
    }
    if (dgc_attr_int(n, "root", 0) < 0) {
        snprintf(msg, msgsz, "AllReduce's attr 'root' must be a replica "
                 "index >= 0, got %lld", (long long)dgc_attr_int(n, "root", 0));
        return -1;
    }
    return one_input(in, n_in, out, msg, msgsz);
}

int dgc_infer_broadcast(DGC_INFER_ARGS)
{
    if (dgc_attr_int(n, "root", 0) < 0) {
        snprintf(msg, msgsz, "Broadcast's attr 'root' must be a replica "
                 "index >= 0, got %lld", (long long)dgc_attr_int(n, "root", 0));
        return -1;
    }
    return one_input(in, n_in, out, msg, msgsz);
}

int dgc_infer_replica_index(DGC_INFER_ARGS)
{
    (void)n; (void)in; (void)n_in; (void)msg; (void)msgsz;
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = DG_I32;
    return 0;
}
