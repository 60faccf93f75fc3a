// Umbrella header for the CTagLib system-library target: pkg-config supplies the flags.
#include <tag_c.h>
