/*
 * fuzz_checkpoint.c -- libFuzzer target: the checkpoint reader
 * (dgr_checkpoint_restore, format in docs/checkpoints.md) against a CPU
 * session of a small graph with Variables of several dtypes and shapes.
 * The reader checks a 64-bit checksum first, which mutations never get
 * right: for inputs of even length the harness rewrites the trailing
 * checksum so the fuzzer reaches the parser behind it.
 * The seed corpus file was saved by the dgrun of issue 15, which wrote this
 * format; `train` now writes TensorFlow's (fuzz_tf_index.c fuzzes that
 * reader), and this one stays for the files it wrote.
 */
#include "checkpoint.h"
#include "fuzz_util.h"
#include "dg_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char graph[] =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2, 3], \"init\": 0.5}},"
    "{\"name\": \"k\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"int32\", \"shape\": [4], \"init\": 3}},"
    "{\"name\": \"d\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float64\", \"shape\": [], \"init\": 2.0}},"
    "{\"name\": \"s\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"int64\", \"shape\": [1, 1, 2], \"init\": 7}},"
    "{\"name\": \"y\", \"op\": \"Sin\", \"inputs\": [\"w\"]}"
    "], \"fetch\": [\"y\"]}";

/* live for the whole process (reachable, so not leaks) */
static dg_device_list *devs;
static dg_program *prog;
static dg_session *sess;

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
    if (!prog)
        abort();
    sess = dg_session_new(prog, &o, &err);
    if (!sess) {
        fprintf(stderr, "fuzz_checkpoint: %s\n", err.msg);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    if (size >= 8 && size % 2 == 0) {
        uint64_t h = dg_fnv1a(DG_FNV1A_INIT, buf, size - 8);
        memcpy(buf + size - 8, &h, 8);
    }
    const char *path = fuzz_scratch(buf, size, "ckpt");
    free(buf);
    dg_error err = {0};
    int64_t step = -1;
    if (dgr_checkpoint_restore((dgr_session *)sess, path, &step, &err) != DG_OK &&
        !err.msg[0])
        abort();
    return 0;
}
