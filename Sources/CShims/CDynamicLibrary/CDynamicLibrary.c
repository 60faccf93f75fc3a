#include "CDynamicLibrary.h"

#include <dlfcn.h>
#include <stdio.h>

int prdl_open(const char *soname, const char *what, const char *package, const char *const *names, void **slots,
              size_t count, void **handle, char *error, size_t error_size) {
    dlerror();
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, error_size, "%s is not installed: sudo apt install %s (%s)", what, package, dlerror());
        return -1;
    }
    for (size_t index = 0; index < count; index++) {
        if ((slots[index] = dlsym(library, names[index])) == NULL) {
            snprintf(error, error_size, "%s is not usable: sudo apt install --reinstall %s (%s: missing %s)", what,
                     package, soname, names[index]);
            dlclose(library);
            return -1;
        }
    }
    if (handle != NULL) *handle = library;
    error[0] = '\0';
    return 0;
}
