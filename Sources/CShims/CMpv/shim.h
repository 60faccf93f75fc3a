// Umbrella header for the CMpv system-library target: pkg-config supplies the flags.
#include <mpv/client.h>
