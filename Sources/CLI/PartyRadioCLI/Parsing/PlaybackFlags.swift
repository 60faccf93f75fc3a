/// Options of the nodes that play (`dj`, `listen`): audio, trace, and the testing clock.
public struct PlaybackFlags: Equatable, Sendable {
    /// `--no-audio`: play nothing here; the node still follows the station and its clock.
    public var noAudio = false
    /// `--audio-driver NAME`: an mpv audio output (`null` for headless machines).
    public var audioDriver: String?
    /// `--trace FILE`: 20 JSON lines a second for measuring synchronisation.
    public var tracePath: String?
    /// `--clock-offset-ms N`: run this node's clock off by N milliseconds, on purpose (testing).
    public var clockOffsetMs: Double = 0
    /// `--clock-drift-ppm N`: make this node's clock run fast (or slow, N < 0) by N ppm (testing).
    public var clockDriftPPM: Double = 0

    /// No flags: audio on, no trace, the true clock.
    public init() {}

    static let help: [(String, String)] = [
        ("--no-audio", "Play nothing here (the node still follows the station and its clock)."),
        ("--audio-driver <name>", "mpv audio output: null, alsa, pulse, pipewire… (default: the first that works)."),
        ("--trace <file>", "Write 20 JSON lines a second on clocks, positions and sync error."),
        ("--clock-offset-ms <n>", "Testing: run this node's clock off by n milliseconds."),
        ("--clock-drift-ppm <n>", "Testing: make this node's clock run fast (or slow, < 0) by n ppm."),
    ]

    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--no-audio": noAudio = true
        case "--audio-driver": audioDriver = try scanner.value(for: option)
        case "--trace": tracePath = try scanner.value(for: option)
        case "--clock-offset-ms": clockOffsetMs = try number(for: option, in: -86_400_000...86_400_000, &scanner)
        case "--clock-drift-ppm": clockDriftPPM = try number(for: option, in: -1000...1000, &scanner)
        default: return false
        }
        return true
    }

    private func number(for option: String, in range: ClosedRange<Double>, _ scanner: inout ArgumentScanner)
        throws(UsageError) -> Double
    {
        let raw = try scanner.value(for: option)
        guard let value = Double(raw), value.isFinite, range.contains(value) else {
            throw UsageError(
                "'\(option)' takes a number from \(Int(range.lowerBound)) to \(Int(range.upperBound)); got '\(raw)'.",
                command: scanner.command)
        }
        return value
    }
}
