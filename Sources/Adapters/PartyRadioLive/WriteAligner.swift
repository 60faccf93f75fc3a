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
struct WriteAligner {
    /// Samples per channel a write is a multiple of.
    static let quantum = 6
    static let channels = 2

    /// Interleaved samples held back: fewer than a quantum's worth.
    private(set) var held: [Int16] = []

    /// How long what is held back plays, at 48 kHz.
    var heldNs: Int64 { Int64(held.count / Self.channels) * 1_000_000_000 / 48_000 }

    /// What to write now: what was held back and `samples`, up to the last whole quantum; the rest
    /// is held back.
    mutating func take(_ samples: ArraySlice<Int16>) -> [Int16] {
        var all = held
        all.append(contentsOf: samples)
        let step = Self.quantum * Self.channels
        let whole = all.count / step * step
        held = Array(all[whole...])
        all.removeLast(all.count - whole)
        return all
    }
}
