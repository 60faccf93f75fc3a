import COpus
import COpusShim
import PartyRadioCore

/// Encodes live audio (docs/LIVE.md, "The carrier"): interleaved 16-bit stereo PCM at 48 kHz, one
/// frame of ``duration`` at a time, into Opus packets of at most ``LiveFrame/maxPayload`` bytes.
/// Application `audio`, variable bitrate, Opus's in-band FEC off (the blocks' repairs do it).
/// One thread at a time.
public final class OpusEncoder {
    public static let sampleRate = 48_000
    public static let channels = 2
    /// The bitrates libopus takes, bits per second.
    public static let bitrates: ClosedRange<Int> = 6_000...510_000

    public let duration: LiveFrameDuration
    private let state: OpaquePointer

    /// - Parameters:
    ///   - bitrate: bits per second, within ``bitrates``; 128 kbit/s by default.
    ///   - duration: the frame size: 2.5, 5, 10 (default) or 20 ms.
    ///   - complexity: 0–10, libopus's CPU against quality.
    public init(bitrate: Int = 128_000, duration: LiveFrameDuration = .ms10, complexity: Int = 10) throws(OpusError) {
        guard Self.bitrates.contains(bitrate) else { throw OpusError(call: "bitrate \(bitrate)", code: OPUS_BAD_ARG) }
        var error: Int32 = OPUS_OK
        guard
            let state = opus_encoder_create(
                opus_int32(Self.sampleRate), Int32(Self.channels), OPUS_APPLICATION_AUDIO, &error),
            error == OPUS_OK
        else { throw OpusError(call: "opus_encoder_create", code: error) }
        self.state = state
        self.duration = duration
        for (call, result) in [
            ("OPUS_SET_BITRATE", propus_set_bitrate(state, opus_int32(bitrate))),
            ("OPUS_SET_INBAND_FEC", propus_set_inband_fec(state, 0)),
            ("OPUS_SET_COMPLEXITY", propus_set_complexity(state, opus_int32(complexity))),
        ] where result != OPUS_OK {
            throw OpusError(call: call, code: result)
        }
    }

    deinit { opus_encoder_destroy(state) }

    /// Samples per channel in one frame.
    public var samplesPerFrame: Int { duration.samples(at: Self.sampleRate) }

    /// The bitrate libopus is set to.
    public var bitrate: Int {
        var value: opus_int32 = 0
        _ = propus_get_bitrate(state, &value)
        return Int(value)
    }

    /// Whether Opus's in-band FEC is on (it is not).
    public var inbandFEC: Bool {
        var value: opus_int32 = 0
        _ = propus_get_inband_fec(state, &value)
        return value != 0
    }

    /// The encoder's look-ahead, samples per channel: its share of the delay.
    public var lookahead: Int {
        var value: opus_int32 = 0
        _ = propus_get_lookahead(state, &value)
        return Int(value)
    }

    /// One frame of interleaved stereo PCM (``samplesPerFrame`` × 2 values) as one Opus packet.
    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        guard pcm.count == samplesPerFrame * Self.channels else {
            throw OpusError(call: "opus_encode (\(pcm.count) samples)", code: OPUS_BAD_ARG)
        }
        var packet = [UInt8](repeating: 0, count: LiveFrame.maxPayload)
        let written = opus_encode(
            state, pcm, Int32(samplesPerFrame), &packet, opus_int32(LiveFrame.maxPayload))
        guard written > 0 else { throw OpusError(call: "opus_encode", code: written) }
        return Array(packet.prefix(Int(written)))
    }
}
