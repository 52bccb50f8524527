/*
 * lazylib.h -- device and math libraries loaded on first use (dlopen), so
 * that commands which only compile (check, place, ops) never load OpenCL,
 * clBLAST, OpenBLAS or oneDNN, nor run their load-time initialisation
 * (docs/decisions.md, "Device libraries load lazily").
 *
 * A backend defines the library's functions it calls with their exact
 * prototypes from the library's header (the compiler checks them), each
 * body one DGR_LAZY_FN line and a call: the first call of any of them
 * loads the library; each function looks its symbol up once.
 */
#ifndef DGR_LAZYLIB_H
#define DGR_LAZYLIB_H

#include <pthread.h>

typedef struct dgr_lazylib {
    const char *what;          /* for messages: "OpenCL ICD loader" */
    const char *const *names;  /* paths or sonames to try, NULL-ended */
    const char *env;           /* environment variable naming the one path
                                  to load instead of names, NULL = none */
    pthread_mutex_t mu;
    void *handle;              /* once loaded */
    int tried;
    char why[256];             /* dlerror() of the last failed name */
} dgr_lazylib;

#define DGR_LAZYLIB_INIT(what, names) \
    {(what), (names), NULL, PTHREAD_MUTEX_INITIALIZER, NULL, 0, ""}
/* The same, loading the path the environment variable `env` names instead
 * when it is set and not empty. */
#define DGR_LAZYLIB_INIT_ENV(what, names, env) \
    {(what), (names), (env), PTHREAD_MUTEX_INITIALIZER, NULL, 0, ""}

/* Load lib (once per process, thread-safe).  Returns its handle, or NULL
 * when no name loads (the reason in lib->why). */
void *dgr_lazylib_open(dgr_lazylib *lib);

/* Whether lib has been loaded in this process (never loads it). */
int dgr_lazylib_loaded(dgr_lazylib *lib);

/* The address of function `sym` in lib, loading lib first.  A library the
 * build linked against that cannot be loaded, or lacks the symbol, is a
 * broken installation: the message names both and the process aborts. */
void *dgr_lazylib_sym(dgr_lazylib *lib, const char *sym);

/* In a lazy definition of library function `name`: fn_ = its address
 * (looked up once, then cached). */
#define DGR_LAZY_FN(lib, name)                                              \
    static __typeof__(&name) cache_;                                        \
    __typeof__(&name) fn_ = __atomic_load_n(&cache_, __ATOMIC_ACQUIRE);     \
    if (!fn_) {                                                             \
        fn_ = (__typeof__(&name))dgr_lazylib_sym(&(lib), #name);            \
        __atomic_store_n(&cache_, fn_, __ATOMIC_RELEASE);                   \
    }

#endif
