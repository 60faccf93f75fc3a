/// Cuts what the live output writes into whole multiples of ``quantum`` samples (per channel),
/// holding the rest back for the next write, so that the sound server never holds a piece whose
/// length is not a whole number of microseconds.
///
/// Why: PulseAudio's timer-driven sinks (module-null-sink, the sink a bench or a streaming setup
/// records) advance their clock by `pa_bytes_to_usec` of each piece they render, rounded down to the
/// microsecond, and a piece ends where a write ended. Writes of any length (a resampled frame is
/// 479, 480 or 481 samples, written in parts) made LivePlayerTests' null sink render about 106 ppm
/// fast, by an amount that depends on how the writes fall. Six samples at 48 kHz are 125 µs
/// exactly; any multiple of them is a whole number of microseconds, and so is every piece the
/// server cuts from them at a 1 ms or 5 ms block.
///
/// One buffer serves every write: what is handed out is a slice of it, and what is held back moves
/// to its front at the next ``take(_:)``, so the audio thread allocates nothing here once the
/// buffer has grown to the longest write.
struct WriteAligner {
    /// Samples per channel a write is a multiple of.
    static let quantum = 6
    static let channels = 2
    private static let step = quantum * channels

    /// What was handed out last, then what is held back.
    private var buffer: [Int16] = []
    private var handedOut = 0

    /// Interleaved samples held back: fewer than a quantum's worth.
    var held: ArraySlice<Int16> { buffer[handedOut...] }

    /// How long what is held back plays, at 48 kHz.
    var heldNs: Int64 { Int64((buffer.count - handedOut) / Self.channels) * 1_000_000_000 / 48_000 }

    /// What to write now: what was held back and `samples`, up to the last whole quantum; the rest
    /// is held back. The slice is the aligner's buffer: written before the next `take`, it is never
    /// copied.
    mutating func take(_ samples: ArraySlice<Int16>) -> ArraySlice<Int16> {
        buffer.removeFirst(handedOut)
        buffer.append(contentsOf: samples)
        handedOut = buffer.count / Self.step * Self.step
        return buffer[..<handedOut]
    }
}
