// Headers only: libpulse's simple API is loaded with dlopen by the live output (CPulseShim).
#include <pulse/simple.h>
#include <pulse/error.h>
