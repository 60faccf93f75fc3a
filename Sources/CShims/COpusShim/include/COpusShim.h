// opus_encoder_ctl and opus_decoder_ctl are variadic macros-and-functions Swift cannot call: one
// typed wrapper per request live audio makes. Each returns libopus's error code (OPUS_OK = 0).
#ifndef PARTYRADIO_COPUS_SHIM_H
#define PARTYRADIO_COPUS_SHIM_H

#include <opus.h>

/// OPUS_SET_BITRATE: bits per second (500 … 512000).
int propus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate);
/// OPUS_GET_BITRATE into `*bitrate`.
int propus_get_bitrate(OpusEncoder *encoder, opus_int32 *bitrate);
/// OPUS_SET_INBAND_FEC: 0 off (live audio's blocks do the FEC), 1 on.
int propus_set_inband_fec(OpusEncoder *encoder, opus_int32 on);
/// OPUS_GET_INBAND_FEC into `*on`.
int propus_get_inband_fec(OpusEncoder *encoder, opus_int32 *on);
/// OPUS_SET_COMPLEXITY: 0 … 10.
int propus_set_complexity(OpusEncoder *encoder, opus_int32 complexity);
/// OPUS_GET_LOOKAHEAD into `*samples` (per channel): the encoder's delay.
int propus_get_lookahead(OpusEncoder *encoder, opus_int32 *samples);

#endif
