// Umbrella header for the CSodium system-library target: pkg-config supplies the flags.
#include <sodium.h>
