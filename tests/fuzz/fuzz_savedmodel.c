/*
 * fuzz_savedmodel.c -- libFuzzer target: the MetaGraphDef and SavedModel
 * reader (compiler/load/load_metagraph.c: format detection by top-level
 * fields, tf_meta.proto's messages, the Saver's subgraph dropped,
 * collections, signature keys) and everything behind it: the GraphDef
 * conversion, then compilation against an assumed CPU + 2 GPU device list
 * (training graphs included: a `train_op` collection makes one).  The
 * input is GRAPH's bytes, as a saved_model.pb or a .meta; a byte of it
 * picks the signature asked for (none, serving_default, another).  Any
 * crash, leak, sanitizer report or timeout is a bug; every rejected input
 * must come back with a status and a message.
 */
#include "dgrun.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const sig[] = {NULL, "serving_default", "predict"};
    dg_error err = {0};
    /* a path whose directory has no variables/: nothing is restored */
    dg_graph *g = dg_graph_load_signature(
        "fuzz-savedmodel/saved_model.pb", (const char *)data, size,
        sig[size ? data[size / 2] % 3 : 0], &err);
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
    o.train_mode = (int)(size & 1);
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p) {
        if (err.code == DG_OK || !err.msg[0])
            abort();
        dg_graph_free(g);
    } else {
        char *r = dg_program_render(p, size % 2 ? "json" : "text");
        free(r);
        dg_program_free(p);
    }
    dg_devices_free(devs);
    return 0;
}
