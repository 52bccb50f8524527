/*
 * memory.c -- the opt-in --memory report of run/train/profile: the peak
 * bytes each device's allocator held during the session
 * (dg_session_peak_bytes), as stderr lines
 * `peak memory <device>: <bytes> bytes (<MiB> MiB)` in text mode or as the
 * top-level "_memory" object of --json output (a key no fetch can have:
 * node names cannot start with '_').
 */
#include "cli.h"

#include <stdio.h>

#include "output.h"

void cli_memory_report(const cli_args *a, const cli_ctx *c,
                       const dg_session *s)
{
    if (!a->memory || a->json || !s || !c->prog || cli_follower())
        return;
    const dg_device_list *dl = dg_program_devices(c->prog);
    int n = dl ? dg_devices_count(dl) : 0;
    for (int i = 0; i < n; i++) {
        int64_t b = dg_session_peak_bytes(s, i);
        fprintf(stderr, "peak memory %s: %lld bytes (%.1f MiB)\n",
                dg_devices_get(dl, i)->name, (long long)b,
                (double)b / (1024.0 * 1024.0));
    }
    fflush(stderr);
}

void cli_memory_json(const cli_args *a, const cli_ctx *c, const dg_session *s,
                     int first, dg_sbuf *b)
{
    if (!a->memory || !a->json || !s || !c->prog)
        return;
    const dg_device_list *dl = dg_program_devices(c->prog);
    int n = dl ? dg_devices_count(dl) : 0;
    dg_sbuf_add(b, first ? "\"_memory\": {" : ", \"_memory\": {");
    for (int i = 0; i < n; i++) {
        dg_sbuf_add(b, i ? ", " : "");
        dg_sbuf_add_json_str(b, dg_devices_get(dl, i)->name);
        dg_sbuf_addf(b, ": {\"peak_bytes\": %lld}",
                     (long long)dg_session_peak_bytes(s, i));
    }
    dg_sbuf_add(b, "}");
}
