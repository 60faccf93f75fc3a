/// A live output's volume (docs/SPEAKERS.md): the same curve as libmpv's `volume` for files, so that
/// a speaker at 20 sounds alike on a file station and a live one — the gain is the cube of the level
/// (20 → 0.008), 0 silent (muted).
public enum LiveGain {
    /// The factor for a level 0–100 (clamped).
    public static func factor(volume: Int) -> Double {
        let level = Double(min(100, max(0, volume))) / 100
        return level * level * level
    }

    /// `pcm` at `factor` (rounded, clamped to 16 bits); the samples as they were at 1.
    public static func apply(_ factor: Double, to pcm: [Int16]) -> [Int16] {
        guard factor != 1 else { return pcm }
        guard factor > 0 else { return [Int16](repeating: 0, count: pcm.count) }
        return pcm.map { Int16(clamping: Int((Double($0) * factor).rounded())) }
    }
}
