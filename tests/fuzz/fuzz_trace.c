/*
 * fuzz_trace.c -- libFuzzer target: the Chrome trace recorder and writer
 * fed random programs.  The input is a byte program of recorder calls (ops,
 * transfers, flows, memory levels, lane names) on an assumed CPU + 2 GPU
 * device list, with times, steps and sizes from the input and names that
 * are either ordinary or arbitrary bytes (quotes, backslashes, control
 * characters, invalid UTF-8).  The written trace must be valid JSON (parsed
 * back with cJSON) and the profile summary must not crash.
 */
#include "trace.h"
#include "fuzz_util.h"

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct rd {
    const uint8_t *p;
    size_t n, off;
} rd;

static uint64_t take(rd *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | (r->off < r->n ? r->p[r->off++] : 0);
    return v;
}

/* Names must outlive the trace: kept here until the input is done. */
static char *pool[4096];
static int n_pool;

static const char *name(rd *r)
{
    static const char *const common[] = {"x", "y:1", "layer/w", "grad/a", "Neg", "MatMul", ""};
    unsigned k = (unsigned)take(r, 1);
    if (k < 200 || n_pool == (int)(sizeof pool / sizeof pool[0]))
        return common[k % (sizeof common / sizeof common[0])];
    size_t len = k - 200; /* up to 55 raw bytes */
    if (len > r->n - r->off)
        len = r->n - r->off;
    char *s = fuzz_cstr(r->p + r->off, len);
    r->off += len;
    pool[n_pool++] = s;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_device_list *devs = NULL;
    dg_error err = {0};
    if (dg_devices_assume(2, &devs, &err) != DG_OK)
        abort();
    int nd = dg_devices_count(devs);
    dgr_trace *t = dgr_trace_new(devs, "fuzz \"graph\".json");
    if (!t)
        abort();
    rd r = {data, size, 0};
    dgr_trace_set_origin(t, take(&r, 2));
    const char *inputs[4];
    for (int calls = 0; r.off < r.n && calls < 2000; calls++) {
        unsigned op = (unsigned)take(&r, 1) % 5;
        int dev = (int)(take(&r, 1) % (unsigned)nd);
        int lane = (int)(take(&r, 1) % 8);
        uint64_t t0 = take(&r, 4), dt = take(&r, 2);
        switch (op) {
        case 0: {
            int ni = (int)(take(&r, 1) % 5);
            for (int i = 0; i < ni; i++)
                inputs[i] = name(&r);
            const char *node = name(&r), *opn = name(&r);
            dgr_trace_op(t, dev, lane, node, opn, (int64_t)take(&r, 1) - 1, t0,
                         t0 + dt, ni ? inputs : NULL, ni,
                         (uint32_t)take(&r, 1)); /* key; 0 = none */
            break;
        }
        case 1:
            dgr_trace_memcpy(t, dev, (int)(take(&r, 1) % (unsigned)nd), name(&r),
                             (int64_t)take(&r, 4), (int64_t)take(&r, 1), t0, t0 + dt,
                             (uint32_t)take(&r, 1));
            break;
        case 2:
            /* producer and consumer slices by key (some never recorded) */
            dgr_trace_flow(t, (uint32_t)take(&r, 1), (uint32_t)take(&r, 1),
                           name(&r));
            break;
        case 3:
            dgr_trace_memory(t, dev, t0, take(&r, 4));
            break;
        default:
            dgr_trace_lane_name(t, dev, lane, name(&r));
            break;
        }
    }
    char *sum = dgr_trace_summary(t);
    free(sum);
    const char *path = fuzz_scratch((const uint8_t *)"", 0, "trace.json");
    if (dgr_trace_write(t, path, &err) != DG_OK)
        abort(); /* /dev/shm has room: nothing may fail */
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc(len + 1);
    if (!text || fread(text, 1, len, f) != len)
        abort();
    fclose(f);
    text[len] = 0;
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (!doc || !cJSON_IsObject(doc) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "traceEvents"))) {
        fprintf(stderr, "fuzz_trace: the trace is not valid JSON\n");
        abort();
    }
    cJSON_Delete(doc);
    free(text);
    dgr_trace_free(t);
    dg_devices_free(devs);
    for (int i = 0; i < n_pool; i++)
        free(pool[i]);
    n_pool = 0;
    return 0;
}
