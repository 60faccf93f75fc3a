// Umbrella header for the COpus system-library target (live audio's codec): pkg-config supplies
// the include path (/usr/include/opus).
#include <opus.h>
