// Umbrella header for the CMicroHTTPD system-library target: headers only, libmicrohttpd is
// loaded with dlopen (CMicroHTTPDShim).
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
