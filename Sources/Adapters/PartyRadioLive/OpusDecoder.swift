import COpus
import PartyRadioCore

/// Decodes live audio: an Opus packet into interleaved 16-bit stereo PCM at 48 kHz, or, for a
/// frame that never came, libopus's packet-loss concealment for its duration (docs/LIVE.md).
/// One thread at a time.
public final class OpusDecoder {
    private let state: OpaquePointer

    public init() throws(OpusError) {
        var error: Int32 = OPUS_OK
        guard
            let state = opus_decoder_create(
                opus_int32(OpusEncoder.sampleRate), Int32(OpusEncoder.channels), &error),
            error == OPUS_OK
        else { throw OpusError(call: "opus_decoder_create", code: error) }
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// The PCM of one packet (up to 120 ms of it; a live frame's is its duration).
    public func decode(_ packet: [UInt8]) throws(OpusError) -> [Int16] {
        guard !packet.isEmpty else { throw OpusError(call: "opus_decode (empty packet)", code: OPUS_BAD_ARG) }
        let capacity = 5_760  // 120 ms, Opus's longest packet
        var pcm = [Int16](repeating: 0, count: capacity * OpusEncoder.channels)
        let samples = opus_decode(state, packet, opus_int32(packet.count), &pcm, Int32(capacity), 0)
        guard samples > 0 else { throw OpusError(call: "opus_decode", code: samples) }
        return Array(pcm.prefix(Int(samples) * OpusEncoder.channels))
    }

    /// The concealment of a missing frame of `duration`: PCM of exactly that length.
    public func conceal(_ duration: LiveFrameDuration) throws(OpusError) -> [Int16] {
        let samples = duration.samples(at: OpusEncoder.sampleRate)
        var pcm = [Int16](repeating: 0, count: samples * OpusEncoder.channels)
        let made = opus_decode(state, nil, 0, &pcm, Int32(samples), 0)
        guard made == samples else { throw OpusError(call: "opus_decode (concealment)", code: made < 0 ? made : -1) }
        return pcm
    }

    /// The decision of a live buffer as PCM: decoded, or concealed.
    public func pcm(for decision: LivePlayout) throws(OpusError) -> [Int16] {
        switch decision {
        case .play(let frame), .recovered(let frame): try decode(frame.payload)
        case .conceal(_, _, let duration): try conceal(duration)
        }
    }
}
