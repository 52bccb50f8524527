/*
 * fuzz_graph.c -- libFuzzer target: the JSON graph loader (dgrun graphs and
 * TensorFlow GraphDef JSON alike: dg_graph_load detects which) followed by
 * compilation against an assumed CPU + 2 GPU device list and rendering of
 * the placement.  Any crash, leak, sanitizer report or timeout is a bug;
 * every rejected input must come back with a status and a message.
 */
#include "dgrun.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_error err = {0};
    dg_graph *g = dg_graph_load("fuzz.json", (const char *)data, size, &err);
    if (!g) {
        if (err.code == DG_OK || !err.msg[0])
            abort(); /* a failure must say what failed */
        return 0;
    }
    dg_device_list *devs = NULL;
    if (dg_devices_assume(2, &devs, &err) != DG_OK)
        abort();
    dg_options o;
    dg_options_init(&o);
    /* vary the options with the input, deterministically */
    o.allow_soft_placement = (int)(size % 3) - 1;
    o.colocate = (int)(size / 3 % 3) - 1;
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p) {
        if (err.code == DG_OK || !err.msg[0])
            abort();
        dg_graph_free(g);
    } else {
        static const char *const fmt[] = {"text", "json", "dot"};
        char *r = dg_program_render(p, fmt[size % 3]);
        free(r);
        if (dg_program_node_count(p) > 0) {
            dg_node_info ni;
            dg_program_node(p, 0, &ni);
            char *e = dg_program_explain(p, ni.name, &err);
            free(e);
        }
        dg_program_free(p);
    }
    dg_devices_free(devs);
    return 0;
}
