/*
 * cl_testlib.h -- helpers shared by the OpenCL backend tests (cl_testlib.c).
 */
#ifndef CL_TESTLIB_H
#define CL_TESTLIB_H

#include "cl_internal.h"
#include "cpu_backend.h"
#include "registry.h"

extern dg_device_list *g_list; /* discovered with opencl_devices "all" */
extern dgr_device g_dev;       /* GPU:0, opened by cl_test_setup */
extern int g_have;             /* 0: no OpenCL device, tests skip */
extern dg_options g_opts;

#define NEED_CL() do { if (!g_have) skip(); } while (0)

/* cmocka group setup / teardown: discover and open GPU:0. */
int cl_test_setup(void **state);
int cl_test_teardown(void **state);

double urand(void);                      /* deterministic [0, 1) */
dg_shape shp(int rank, ...);             /* shape from int dims */
int64_t ne(const dg_shape *s);
void store(void *p, dg_dtype t, int64_t i, double v);
double load(const void *p, dg_dtype t, int64_t i);
/* Upload n values (converted to t) to a new buffer on d / read back. */
dgr_value up(dgr_device *d, dg_dtype t, dg_shape s, const double *v);
double *down(dgr_device *d, const dgr_value *v); /* malloc'd */
double *rnd(int64_t n, double lo, double hi);    /* malloc'd */

/* One node of a throw-away graph, its inputs on GPU:0 and output types. */
typedef struct tnode {
    dgc_graph *g;
    dgc_node *n;
    dgr_value in[12];
    int n_in;
    dgr_value out[6];
    dgc_ttype ot[6];
    int n_out;
    dg_error err;
} tnode;

void tn_init(tnode *t, const char *op);
void tn_in(tnode *t, dg_dtype dt, dg_shape s, const double *v);
void tn_out(tnode *t, dg_dtype dt, dg_shape s);
/* Run the OpenCL kernel; when the op has a CPU kernel, run it too on copies
 * of the inputs and fail unless every output agrees. */
dg_status tn_run(tnode *t);
void tn_free(tnode *t);
dgr_kctx make_ctx(tnode *t, dgr_device *d, dgr_value *in, dgr_value *out);

/* Fail unless max |got - want| / (1 + max |want|) <= tol. */
void check_close(const double *got, const double *want, int64_t n,
                 double tol, const char *what);
void check_out(tnode *t, int i, const double *want, double tol,
               const char *what);

#endif
