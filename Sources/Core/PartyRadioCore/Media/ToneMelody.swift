/// Sine-tone melodies for the demo library: recognisably different tracks that cost nothing to
/// ship. Pure sample generation (no libm: the oscillator is a rotating phasor).
public struct ToneMelody: Hashable, Sendable {
    /// Semitone offsets from A4 (440 Hz); nil is a rest.
    public var notes: [Int?]
    /// Length of one note.
    public var noteMs: Int

    public init(notes: [Int?], noteMs: Int) {
        self.notes = notes
        self.noteMs = noteMs
    }

    /// Mono 16-bit samples, the melody repeated to fill `durationMs`.
    public func render(durationMs: Int, sampleRate: Int, amplitude: Double = 0.3) -> [Int16] {
        let total = durationMs * sampleRate / 1000
        let perNote = max(1, noteMs * sampleRate / 1000)
        let ramp = max(1, min(perNote / 4, sampleRate / 100))  // 10 ms fade in/out: no clicks
        var out = [Int16](repeating: 0, count: total)
        var index = 0
        var noteIndex = 0
        while index < total && !notes.isEmpty {
            let note = notes[noteIndex % notes.count]
            noteIndex += 1
            let count = min(perNote, total - index)
            guard let note else {
                index += count
                continue
            }
            let frequency = 440 * Self.power2(Double(note) / 12)
            let step = 2 * Double.pi * frequency / Double(sampleRate)
            let (stepCos, stepSin) = (Self.cosine(step), Self.cosine(step - Double.pi / 2))
            var (c, s) = (1.0, 0.0)
            for n in 0..<count {
                let envelope = min(1, Double(min(n, count - 1 - n)) / Double(ramp))
                out[index + n] = Int16((s * amplitude * envelope * 32_767).rounded())
                (c, s) = (c * stepCos - s * stepSin, s * stepCos + c * stepSin)
            }
            index += count
        }
        return out
    }

    /// cos(x) for small |x| by its Taylor series (x here is at most a few radians).
    static func cosine(_ x: Double) -> Double {
        var term = 1.0
        var sum = 1.0
        for k in stride(from: 2, through: 30, by: 2) {
            term *= -x * x / Double((k - 1) * k)
            sum += term
        }
        return sum
    }

    /// 2^x for |x| ≤ a few octaves.
    static func power2(_ x: Double) -> Double {
        let whole = Int(x.rounded(.down))
        let fraction = x - Double(whole)
        // e^(f·ln2) by Taylor series; f in [0, 1).
        let y = fraction * 0.693_147_180_559_945_3
        var term = 1.0
        var sum = 1.0
        for k in 1...20 {
            term *= y / Double(k)
            sum += term
        }
        return whole >= 0 ? sum * Double(1 << whole) : sum / Double(1 << -whole)
    }
}
