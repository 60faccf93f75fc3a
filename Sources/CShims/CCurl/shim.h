// Umbrella header for the CCurl system-library target: pkg-config supplies the flags.
#include <curl/curl.h>
