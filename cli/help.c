/*
 * help.c -- the text of `dgrun --help` and `dgrun COMMAND --help`.
 */
#include "args.h"

static const char GLOBAL[] =
    "usage: dgrun COMMAND [GRAPH] [options]\n"
    "\n"
    "dgrun compiles a JSON dataflow graph (TensorFlow-1 semantics: gradients,\n"
    "training, device placement) and runs it on CPU thread pools and OpenCL\n"
    "devices, writing Chrome traces.\n"
    "\n"
    "commands:\n"
    "  run      GRAPH [options]   run the graph's fetches once; print them\n"
    "  train    GRAPH [options]   run the training loop of the graph's \"train\" section\n"
    "  profile  GRAPH [options]   run (or, with --train, train) with tracing; write a Chrome trace\n"
    "  place    GRAPH [options]   compile only; print the placement (no device is touched)\n"
    "  check    GRAPH [options]   compile only; report errors, print nothing on success\n"
    "  devices  [options]         list the devices this process would use\n"
    "  ops                        list the ops, their dtypes and which devices have kernels\n"
    "\n"
    "  dgrun --version | --help | COMMAND --help\n"
    "\n"
    "GRAPH is a path, or - for standard input: a dgrun JSON graph, a TensorFlow\n"
    "GraphDef (binary .pb or proto3 JSON), a MetaGraphDef (.meta, binary or text)\n"
    "or a SavedModel directory.  Exit codes: 0 success, 1 runtime\n"
    "or I/O failure, 2 usage/graph/placement error, 3 place --expect mismatch.\n"
    "Environment: DGRUN_OPENCL_DEVICES, DGRUN_VISIBLE_DEVICES fill\n"
    "--opencl-devices and --visible-devices when those flags are absent.\n";

#define O_COMPILE                                                              \
    "  --allow-soft-placement      fall back instead of failing when a device request cannot be met\n" \
    "  --colocate, --no-colocate   colocate gradient ops with their forward ops (overrides the graph)\n" \
    "  --device SPEC               device scope around the whole graph, like tf.device(SPEC)\n" \
    "  --placement FILE            placement rules (JSON array) replacing the graph's rules\n" \
    "  --signature KEY             a SavedModel's signature (default serving_default): its input\n" \
    "                              and output keys name feeds and fetches; its outputs are fetched\n"
#define O_DEVSEL                                                               \
    "  --opencl-devices gpu|all|none  OpenCL devices that become GPU:n: gpu (default) = GPU and\n" \
    "                              accelerator types; all = also CPU types (PoCL: GPU-less machines);\n" \
    "                              none = CPU:0 only (env DGRUN_OPENCL_DEVICES)\n" \
    "  --visible-devices LIST      comma list of physical GPU indices, renumbered from 0; \"\" hides all\n" \
    "                              (env DGRUN_VISIBLE_DEVICES)\n" \
    "  --virtual-gpus N            split each visible GPU into N logical GPUs\n" \
    "  --cluster JOB=N[,JOB=N...]  jobs and their task counts, e.g. ps=2,worker=2 (overrides the\n" \
    "                              graph's \"cluster\"; place/check give every task this machine's\n" \
    "                              devices or --assume-gpus; run/train/profile need mpirun -np TASKS)\n"
#define O_MEM                                                                  \
    "  --gpu-memory-fraction F     cap each GPU's allocator at F (0 < F <= 1) of its memory\n" \
    "  --allow-growth, --no-allow-growth  grow GPU pools on demand (default) / reserve at start\n"
#define O_EXEC                                                                 \
    "  --log-device-placement      print the placement log on stderr before running\n" \
    "  --feed NAME=FILE            feed a Placeholder from a .npy or .csv file (repeatable)\n" \
    "  --inter-op-threads N        inter-op pool size per device; 0 = number of cores (default)\n" \
    "  --intra-op-threads N        threads one CPU kernel may use; 0 = number of cores (default)\n" \
    "  --seed N                    seed for random initializers and shuffles (default 0)\n" \
    "  --no-fusion                 run MatMul, BiasAdd and Relu as separate ops (debugging)\n"
#define O_MEMREP                                                               \
    "  --memory                    report each device's peak memory (stderr; --json: \"_memory\")\n"
#define O_HELP "  -h, --help                  show this help\n"

static const char RUN[] =
    "usage: dgrun run GRAPH [options]\n\n"
    "Run the graph's fetches once (or --repeat N times) and print each as\n"
    "`<name> = <value>` in NumPy's layout, or as one JSON object with --json:\n"
    "{\"<fetch>\": {\"dtype\", \"shape\", \"value\"}} (NaN and infinities as null).\n"
    "With nothing to fetch (a GraphDef has no fetch list) give --fetch.\n\n"
    "options:\n"
    "  --fetch NAME[,NAME...]      what to fetch (overrides the graph's \"fetch\"; repeatable)\n"
    "  --checkpoint PATH           restore Variables from a checkpoint (TF's or dgrun's: a prefix,\n"
    "                              or a directory whose `checkpoint` file names it) before running\n"
    "  --repeat N                  run N times in one session (Variables keep state); print the last\n"
    "  --trace FILE                also write a Chrome trace\n"
    "  --json                      print results as one JSON object\n"
    O_EXEC O_MEMREP O_COMPILE O_DEVSEL O_MEM O_HELP;

static const char TRAIN[] =
    "usage: dgrun train GRAPH [options]\n\n"
    "Run the training loop of the graph's \"train\" section.  Progress goes to\n"
    "stderr (an updating line on a terminal, else one line per log_every steps);\n"
    "stdout gets the final loss and the eval fetches, or with --json\n"
    "{\"steps\", \"loss\", \"variables\": {...}, \"eval\": {...}}.  Ctrl-C (SIGINT) or\n"
    "SIGTERM ends the step in progress, saves the checkpoint when one is\n"
    "configured, prints how to resume (--restore) and exits 130 / 143.\n\n"
    "options:\n"
    "  --steps N                   number of steps (default: the graph's)\n"
    "  --checkpoint PATH           checkpoint prefix (TF's format), or directory (existing, or\n"
    "                              ending in /) for PATH/model.ckpt-STEP, the newest 5 kept;\n"
    "                              made if missing; overrides the graph's\n"
    "  --restore                   restore Variables from the checkpoint before training\n"
    "  --trace FILE                also write a Chrome trace\n"
    "  --json                      print the result as one JSON object\n"
    O_EXEC O_MEMREP O_COMPILE O_DEVSEL O_MEM O_HELP;

static const char PROFILE[] =
    "usage: dgrun profile GRAPH [options]\n\n"
    "Run the fetches (or train, with --train) with tracing, write a Chrome trace\n"
    "(Perfetto / chrome://tracing) and print a summary per device.  With --train\n"
    "it shows train's progress and prints its loss and eval first.  Ctrl-C or\n"
    "SIGTERM ends the step in progress and writes the trace of the steps done\n"
    "(exit 130 / 143).\n\n"
    "options:\n"
    "  -o, --output FILE           trace file (default trace.json)\n"
    "  --train                     profile the training loop instead of the fetches\n"
    "  --steps N                   with --train: training steps (default: the graph's);\n"
    "                              else runs of the fetches (default 1)\n"
    "  --repeat N                  runs of the fetches (without --train; wins over --steps)\n"
    "  --fetch NAME[,NAME...]      what to fetch (overrides the graph's \"fetch\")\n"
    O_EXEC
    "  --memory                    report each device's peak memory on stderr\n"
    O_COMPILE O_DEVSEL O_MEM O_HELP;

static const char PLACE[] =
    "usage: dgrun place GRAPH [options]\n\n"
    "Compile only and print the placement, one `<name>: (<op>): <device>` line per\n"
    "node.  No device is touched.\n\n"
    "options:\n"
    "  -o, --output FILE           write the placement to FILE instead of stdout\n"
    "  --format text|json|dot      output format (default text)\n"
    "  --json                      same as --format json\n"
    "  --expect GOLDEN             compare with a golden {\"node\": \"device\"} file; print\n"
    "                              differences and exit 3 if any\n"
    "  --explain NODE              show how NODE's device was chosen\n"
    "  --assume-gpus N             compile as if N GPUs (and CPU:0) existed (per task in a cluster)\n"
    "  --log-device-placement      also print the placement log on stderr\n"
    O_COMPILE O_DEVSEL O_HELP;

static const char CHECK[] =
    "usage: dgrun check GRAPH [options]\n\n"
    "Compile only; print nothing on success, one error line otherwise.\n\n"
    "options:\n"
    "  --assume-gpus N             compile as if N GPUs (and CPU:0) existed (per task in a cluster)\n"
    "  --log-device-placement      print the placement log on stderr\n"
    O_COMPILE O_DEVSEL O_HELP;

static const char DEVICES[] =
    "usage: dgrun devices [options]\n\n"
    "List the devices this process would use, one line per device:\n"
    "  <full name> -> device: <id>, name: <name>, platform: <platform>, memory: <MiB> MiB, ...\n\n"
    "options:\n"
    "  --json                      print a JSON array\n"
    O_DEVSEL O_MEM O_HELP;

static const char OPS[] =
    "usage: dgrun ops [--json | --markdown]\n\n"
    "List the ops, their dtypes and which devices have kernels.\n"
    "\n"
    "options:\n"
    "  --json                      the op table as one JSON object (for tools)\n"
    "  --markdown                  the op table as docs/graphdef.md's Markdown table\n"
    O_HELP;

const char *cli_help_text(cli_cmd c)
{
    switch (c) {
    case CLI_RUN: return RUN;
    case CLI_TRAIN: return TRAIN;
    case CLI_PROFILE: return PROFILE;
    case CLI_PLACE: return PLACE;
    case CLI_CHECK: return CHECK;
    case CLI_DEVICES: return DEVICES;
    case CLI_OPS: return OPS;
    default: return GLOBAL;
    }
}
