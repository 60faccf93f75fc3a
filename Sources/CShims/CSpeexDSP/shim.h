// speexdsp's resampler: the live output's drift correction (docs/LIVE.md, "Drift").
#include <speex/speex_resampler.h>
