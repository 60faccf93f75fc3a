// Umbrella header for the CISAL system-library target: ISA-L's Reed-Solomon erasure code, live
// audio's FEC (docs/LIVE.md).
#include <isa-l/erasure_code.h>
