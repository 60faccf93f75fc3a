#include "COpenSSLShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static prcrypto_table table;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int result = -1;
static char load_error[256];

static void load(void) {
    dlerror();
    void *library = dlopen(PRCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "libcrypto is not installed: sudo apt install libssl3 (%s)", dlerror());
        return;
    }
#define PRCRYPTO_LOOKUP(name)                                                                         \
    if ((table.name = (__typeof__(name) *)dlsym(library, #name)) == NULL) {                          \
        snprintf(load_error, sizeof load_error, "libcrypto is not usable: sudo apt install --reinstall libssl3 (%s: missing %s)", \
                 PRCRYPTO_SONAME, #name);                                                              \
        return;                                                                                       \
    }
    PRCRYPTO_FUNCTIONS(PRCRYPTO_LOOKUP)
#undef PRCRYPTO_LOOKUP
    result = 0;
}

int prcrypto_load(void) {
    pthread_once(&once, load);
    return result;
}

const char *prcrypto_load_error(void) {
    prcrypto_load();
    return load_error;
}

const prcrypto_table *prcrypto_functions(void) { return &table; }
