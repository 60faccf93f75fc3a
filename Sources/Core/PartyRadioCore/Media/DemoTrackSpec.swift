/// The demo library: six short tone tracks with tags, for parties without music files and for tests.
public struct DemoTrackSpec: Hashable, Sendable {
    public var fileName: String
    public var info: WAVWriter.Info
    public var durationMs: Int
    public var melody: ToneMelody

    public init(fileName: String, info: WAVWriter.Info, durationMs: Int, melody: ToneMelody) {
        self.fileName = fileName
        self.info = info
        self.durationMs = durationMs
        self.melody = melody
    }

    /// Sample rate of the demo files: 22.05 kHz mono keeps 30 s near 1.3 MB.
    public static let sampleRate = 22_050

    /// The bytes of this track's WAV file.
    public func wavBytes(sampleRate: Int = DemoTrackSpec.sampleRate) -> [UInt8] {
        WAVWriter.pcm16(
            samples: melody.render(durationMs: durationMs, sampleRate: sampleRate), sampleRate: sampleRate, info: info)
    }

    /// The six demo tracks, 20–40 s each. `durationScale` shortens them for tests.
    public static func standard(durationScale: Double = 1) -> [DemoTrackSpec] {
        let album = "partyradio demo tones"
        let rows: [(String, String, Int, [Int?], Int)] = [
            ("Sunrise Scale", "The Oscillators", 24_000, [0, 2, 4, 5, 7, 9, 11, 12], 250),
            ("Minor Stroll", "Sine Society", 30_000, [0, 3, 7, 3, 5, 8, 12, nil], 300),
            ("Octave Bounce", "The Oscillators", 20_000, [-12, 0, -10, 2, -8, 4, -7, 5], 200),
            ("Pentatonic Drift", "Phase Locked", 36_000, [0, 2, 4, 7, 9, 7, 4, 2], 350),
            ("Blue Hour", "Sine Society", 28_000, [0, 3, 5, 6, 7, 10, 12, 10, 7, nil], 280),
            ("Last Call Arpeggio", "Phase Locked", 40_000, [-5, 0, 4, 7, 12, 7, 4, 0], 180),
        ]
        return rows.enumerated().map { index, row in
            DemoTrackSpec(
                fileName: String(format2: index + 1) + " " + row.0 + ".wav",
                info: WAVWriter.Info(title: row.0, artist: row.1, album: album),
                durationMs: max(500, Int(Double(row.2) * durationScale)),
                melody: ToneMelody(notes: row.3, noteMs: row.4))
        }
    }
}

extension String {
    /// Two-digit zero-padded number, without Foundation's String(format:).
    fileprivate init(format2 value: Int) {
        self = value < 10 ? "0\(value)" : "\(value)"
    }
}
