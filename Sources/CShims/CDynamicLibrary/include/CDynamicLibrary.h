// Libraries loaded with dlopen when a command first needs them, not linked: the commands that never
// use one do not map it (and the libraries it brings), nor pay for its load at start-up. Each shim
// lists the functions partyradio calls, FUNCTIONS(X) with X(name) for each, and gets a table of
// pointers typed from the library's own declarations (typeof does not reference the symbol, so
// nothing makes the linker want the library).
#ifndef PARTYRADIO_CDYNAMICLIBRARY_H
#define PARTYRADIO_CDYNAMICLIBRARY_H

#include <pthread.h>
#include <stddef.h>

/// Opens `soname` and sets `slots[i]` to the function `names[i]`, for i < `count`: 0, or -1 with
/// one sentence and its fix in `error` ("WHAT is not installed: sudo apt install PACKAGE (…)").
/// `handle` (NULL: not wanted) gets the library's handle, for dlclose.
int prdl_open(const char *soname, const char *what, const char *package, const char *const *names, void **slots,
              size_t count, void **handle, char *error, size_t error_size);

#define PRDL_FIELD(name) __typeof__(name) *name;
#define PRDL_NAME(name) #name,

/// Declares `PREFIX_table` (one pointer per function), `PREFIX_load()` (loads the library once per
/// process, thread-safe: 0, or -1), `PREFIX_load_error()` (why it is not usable, "" when it is) and
/// `PREFIX_functions()` (the table, complete once `PREFIX_load()` returned 0).
#define PRDL_DECLARE(prefix, FUNCTIONS)                    \
    typedef struct {                                       \
        FUNCTIONS(PRDL_FIELD)                              \
    } prefix##_table;                                      \
    int prefix##_load(void);                               \
    const char *prefix##_load_error(void);                 \
    const prefix##_table *prefix##_functions(void);

/// Defines what `PRDL_DECLARE(PREFIX, FUNCTIONS)` declared, for the library `soname`, named `what`
/// in errors, from the Debian package `package`.
#define PRDL_DEFINE(prefix, soname, what, package, FUNCTIONS)                                              \
    static prefix##_table prefix##_slots;                                                                  \
    static pthread_once_t prefix##_once = PTHREAD_ONCE_INIT;                                               \
    static int prefix##_result = -1;                                                                       \
    static char prefix##_error[256];                                                                       \
    static void prefix##_open(void) {                                                                      \
        static const char *const names[] = {FUNCTIONS(PRDL_NAME)};                                         \
        _Static_assert(sizeof(prefix##_table) == sizeof names / sizeof *names * sizeof(void *), "slots"); \
        prefix##_result = prdl_open(soname, what, package, names, (void **)&prefix##_slots,                \
                                    sizeof names / sizeof *names, NULL, prefix##_error, sizeof prefix##_error); \
    }                                                                                                      \
    int prefix##_load(void) {                                                                              \
        pthread_once(&prefix##_once, prefix##_open);                                                       \
        return prefix##_result;                                                                            \
    }                                                                                                      \
    const char *prefix##_load_error(void) {                                                                \
        prefix##_load();                                                                                   \
        return prefix##_error;                                                                             \
    }                                                                                                      \
    const prefix##_table *prefix##_functions(void) { return &prefix##_slots; }

#endif
