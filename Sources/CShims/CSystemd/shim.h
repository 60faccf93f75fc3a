// Umbrella header for the CSystemd system-library target (sd-bus): pkg-config supplies the flags.
#include <systemd/sd-bus.h>
