/*
 * fuzz_tf_index.c -- libFuzzer target: TensorFlow's checkpoint index
 * reader (the LevelDB table of PREFIX.index, the BundleHeaderProto and
 * BundleEntryProtos: runtime/session/tf_table.c, tf_bundle.c) and the
 * restore behind it.  Each input is parsed as an index whose data shard is
 * a fixed 4 KiB pattern: without the table's block checksums for inputs of
 * even length (mutations never get a CRC-32C right, so the parser behind
 * them is reached), with them for odd ones; every entry it lists is read
 * (sizes up to 1 MiB).  The input is then restored, checksums on, into a
 * CPU session of a graph with Variables named like TF's (w, w/Adam,
 * global_step) and the parts of a partitioned variable (p/part_0,
 * p/part_1: the slices of p), so a valid index (the seeds in
 * corpus/tf_index, written by TF 2.21 and by dgrun; tf_partitioned.index
 * by tools/tf_ckpt/make_partitioned.py) reaches the dtype, shape, slice
 * and data checks.
 */
#include "checkpoint.h"
#include "tf_bundle.h"
#include "fuzz_util.h"
#include "dg_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char graph[] =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2, 3], \"init\": 0.5}},"
    "{\"name\": \"w/Adam\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2, 3], \"init\": 0.0}},"
    "{\"name\": \"global_step\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"int64\", \"shape\": [], \"init\": 0}},"
    "{\"name\": \"flag\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"bool\", \"shape\": [2], \"init\": true}},"
    "{\"name\": \"p/part_0\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [1, 3], \"init\": 0.0}},"
    "{\"name\": \"p/part_1\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [1, 3], \"init\": 0.0}},"
    "{\"name\": \"y\", \"op\": \"Sin\", \"inputs\": [\"w\"]}"
    "], \"fetch\": [\"y\"]}";

/* live for the whole process (reachable, so not leaks) */
static dg_device_list *devs;
static dg_program *prog;
static dg_session *sess;
static char prefix[300];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    dg_error err = {0};
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    dg_graph *g = dg_graph_load("ckpt.json", graph, sizeof graph - 1, &err);
    if (!g || dg_devices_assume(0, &devs, &err) != DG_OK)
        abort();
    prog = dg_compile(g, &o, devs, &err);
    if (!prog || !(sess = dg_session_new(prog, &o, &err))) {
        fprintf(stderr, "fuzz_tf_index: %s\n", err.msg);
        abort();
    }
    /* the data shard every index refers to: PREFIX.data-00000-of-00001 */
    uint8_t shard[4096];
    for (size_t i = 0; i < sizeof shard; i++)
        shard[i] = (uint8_t)(i * 31 + 7);
    const char *p = fuzz_scratch(shard, sizeof shard, "tfi.data-00000-of-00001");
    size_t n = strlen(p) - strlen(".data-00000-of-00001");
    memcpy(prefix, p, n);
    prefix[n] = '\0';
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sess)
        LLVMFuzzerInitialize(NULL, NULL);
    dg_error err = {0};
    dgr_bundle b;
    dg_status st = dgr_bundle_parse_index(data, size, size % 2, "fuzz.index", prefix,
                                          &b, &err);
    if (st != DG_OK && !err.msg[0])
        abort();
    for (int32_t i = 0; st == DG_OK && i < b.n; i++) {
        const dgr_bundle_entry *e = &b.ents[i];
        if (e->size < 0 || e->size > (1 << 20))
            continue;
        void *dst = dg_malloc((size_t)e->size + 1);
        if (!dst)
            abort();
        err.msg[0] = '\0';
        if (dgr_bundle_read(&b, e, dst, &err) != DG_OK && !err.msg[0])
            abort();
        dg_free(dst);
        if (dgr_bundle_find_n(&b, e->key, e->klen) != e)
            abort(); /* keys are unique and sorted */
    }
    if (st == DG_OK)
        dgr_bundle_free(&b);
    /* the whole restore (checksums on) */
    fuzz_scratch(data, size, "tfi.index");
    int64_t step = -1;
    err.msg[0] = '\0';
    st = dgr_checkpoint_restore((dgr_session *)sess, prefix, &step, &err);
    if (st != DG_OK && !err.msg[0])
        abort();
    if (getenv("FUZZ_VERBOSE")) /* what each seed reaches */
        fprintf(stderr, "restore: %s (step %lld)\n", st == DG_OK ? "ok" : err.msg,
                (long long)step);
    return 0;
}
