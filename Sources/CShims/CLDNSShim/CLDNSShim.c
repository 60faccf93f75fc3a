#include "CLDNSShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static prldns_table table;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int result = -1;
static char load_error[256];

static void load(void) {
    dlerror();
    void *library = dlopen(PRLDNS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "ldns is not installed: sudo apt install libldns3 (%s)", dlerror());
        return;
    }
#define PRLDNS_LOOKUP(name)                                                                         \
    if ((table.name = (__typeof__(name) *)dlsym(library, #name)) == NULL) {                          \
        snprintf(load_error, sizeof load_error, "ldns is not usable: sudo apt install --reinstall libldns3 (%s: missing %s)", \
                 PRLDNS_SONAME, #name);                                                              \
        return;                                                                                       \
    }
    PRLDNS_FUNCTIONS(PRLDNS_LOOKUP)
#undef PRLDNS_LOOKUP
    result = 0;
}

int prldns_load(void) {
    pthread_once(&once, load);
    return result;
}

const char *prldns_load_error(void) {
    prldns_load();
    return load_error;
}

const prldns_table *prldns_functions(void) { return &table; }
