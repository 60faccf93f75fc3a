// Umbrella header for the CMicroHTTPD system-library target: pkg-config supplies the flags.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
