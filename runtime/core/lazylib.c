/*
 * lazylib.c -- libraries loaded on first use (lazylib.h).
 */
#include "lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dgr_lazylib_open(dgr_lazylib *lib)
{
    void *h = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);
    if (h)
        return h;
    pthread_mutex_lock(&lib->mu);
    if (!lib->handle && !lib->tried) {
        lib->tried = 1;
        const char *path = lib->env ? getenv(lib->env) : NULL;
        const char *one[2] = {path, NULL};
        const char *const *names = path && *path ? one : lib->names;
        for (const char *const *n = names; *n && !lib->handle; n++) {
            h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                __atomic_store_n(&lib->handle, h, __ATOMIC_RELEASE);
            } else {
                const char *e = dlerror();
                snprintf(lib->why, sizeof lib->why, "%s", e ? e : *n);
            }
        }
    }
    h = lib->handle;
    pthread_mutex_unlock(&lib->mu);
    return h;
}

int dgr_lazylib_loaded(dgr_lazylib *lib)
{
    return __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE) != NULL;
}

void *dgr_lazylib_sym(dgr_lazylib *lib, const char *sym)
{
    void *h = dgr_lazylib_open(lib);
    void *p = h ? dlsym(h, sym) : NULL;
    if (!p) {
        /* no error path exists for a library function's caller: the build
         * linked against this library, so the installation is broken */
        fprintf(stderr, "dgrun: error: cannot load %s (%s) for %s: %s\n",
                lib->what, lib->names[0], sym,
                h ? "symbol not found" : lib->why);
        abort();
    }
    return p;
}
