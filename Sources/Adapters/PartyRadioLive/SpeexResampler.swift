import CSpeexDSP

/// Resamples interleaved 16-bit stereo by a ratio near 1 that may change between calls without a
/// step: the live output's drift correction (``LiveDriftController`` picks the ratio; docs/LIVE.md,
/// "Drift"). speexdsp's resampler keeps its filter state and fractional position across calls
/// and ratio changes, so every input sample is used once and none is dropped or repeated; what
/// it cannot finish yet waits in its state for the next call. One thread at a time.
public final class SpeexResampler {
    private let state: OpaquePointer
    /// The denominator of the ratio: steps of 15 ppm, which the drift controller's loop smooths (its
    /// error integrates what one step leaves, and it moves between neighbouring steps). Below 2^16:
    /// when the ratio changes, speexdsp rescales each channel's fractional position from the old
    /// denominator to the new one in 32 bits (`_muldiv`), and where that would overflow it refuses the
    /// change and keeps the old ratio (a denominator of 40 000 003 had every change after the first
    /// sample refused). A prime, so that speexdsp never reduces the fraction to a small denominator:
    /// there it switches to a filter table of its own per phase.
    private static let denominator: UInt32 = 65_521
    private var numerator: UInt32 = denominator
    /// The ratio last set (output samples per input sample).
    public private(set) var ratio: Double = 1

    /// - Parameter quality: speexdsp's 0 (fastest) to 10 (best); 4 is PulseAudio's own choice for
    ///   its adaptive loopback's drift.
    public init(quality: Int32 = 4) throws(PulseError) {
        var error: Int32 = 0
        guard let made = speex_resampler_init(2, 48_000, 48_000, quality, &error) else {
            throw PulseError("speex_resampler_init failed: \(String(cString: speex_resampler_strerror(error)))")
        }
        // Not speex_resampler_skip_zeros: the player places its first frame as if each input
        // sample comes out ``delaySamples`` after the output written before it (the pacer's
        // latency includes the filter's delay), which is so from the first sample only when the
        // filter starts with its delay of silence. Skipping it put every placed output 0.65 ms
        // early, which the drift controller then took seconds to take away.
        state = made
    }

    deinit { speex_resampler_destroy(state) }

    /// How late the filter puts a sample, in output samples, from the first one on: the output's
    /// latency grows by it.
    public var delaySamples: Int { Int(speex_resampler_get_output_latency(state)) }

    /// Sets output samples per input sample (`1 + ppm / 1e6`; within 1 ± 1 %).
    public func setRatio(_ ratio: Double) {
        let bounded = max(0.99, min(1.01, ratio))
        // speexdsp's ratio is input over output, as a fraction.
        let wanted = UInt32((Double(Self.denominator) / bounded).rounded())
        guard wanted != numerator else { return }
        // A change speexdsp refuses leaves the ratio as it was: so does this.
        guard speex_resampler_set_rate_frac(state, wanted, Self.denominator, 48_000, 48_000) == 0 else { return }
        numerator = wanted
        self.ratio = Double(Self.denominator) / Double(wanted)
    }

    /// All of `input` (interleaved stereo) through the resampler: about `input.count · ratio`
    /// samples out.
    public func process(_ input: [Int16]) -> [Int16] {
        let frames = input.count / 2
        guard frames > 0 else { return [] }
        var output = [Int16](repeating: 0, count: (Int(Double(frames) * ratio) + 64) * 2)
        var produced = 0
        var consumed = 0
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                while consumed < frames && produced < target.count / 2 {
                    var inLength = UInt32(frames - consumed)
                    var outLength = UInt32(target.count / 2 - produced)
                    speex_resampler_process_interleaved_int(
                        state, source.baseAddress! + consumed * 2, &inLength, target.baseAddress! + produced * 2,
                        &outLength)
                    if inLength == 0 && outLength == 0 { break }
                    consumed += Int(inLength)
                    produced += Int(outLength)
                }
            }
        }
        output.removeLast(output.count - produced * 2)
        return output
    }
}
