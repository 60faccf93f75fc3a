#include "COpusShim.h"

int propus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}

int propus_get_bitrate(OpusEncoder *encoder, opus_int32 *bitrate) {
    return opus_encoder_ctl(encoder, OPUS_GET_BITRATE(bitrate));
}

int propus_set_inband_fec(OpusEncoder *encoder, opus_int32 on) {
    return opus_encoder_ctl(encoder, OPUS_SET_INBAND_FEC(on));
}

int propus_get_inband_fec(OpusEncoder *encoder, opus_int32 *on) {
    return opus_encoder_ctl(encoder, OPUS_GET_INBAND_FEC(on));
}

int propus_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}

int propus_get_lookahead(OpusEncoder *encoder, opus_int32 *samples) {
    return opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(samples));
}
