/// Where a live station's audio comes from (`dj --live SOURCE`, docs/LIVE.md "Sources"): the sound
/// server (a sink of the station's own that any application plays into, or a source that exists), or
/// raw PCM from a named pipe or from standard input, in Snapcast's pipe format so that the recipes
/// people already run (mpd's fifo output, shairport-sync, librespot's pipe backend) work unchanged.
public enum LiveSource: Hashable, Sendable, CustomStringConvertible {
    /// `pulse` (and `--live` with no value): a null sink named after the station
    /// (``pulseSinkName(station:)``), made while the station runs, its monitor captured.
    case stationSink
    /// `pulse:NAME`: a source the sound server has (a line-in, another sink's `.monitor`).
    case pulseSource(String)
    /// `pipe:PATH[?sampleformat=R:B:C]`: a FIFO (or any readable file), opened again whenever its
    /// writer goes away.
    case pipe(path: String, format: LiveSampleFormat)
    /// `-`: standard input, in the station's sample format.
    case standardInput(format: LiveSampleFormat)

    public var description: String {
        switch self {
        case .pipe(let path, let format): "pipe:\(path)?sampleformat=\(format)"
        case .standardInput(let format): "-?sampleformat=\(format)"
        case .stationSink: "pulse"
        case .pulseSource(let name): "pulse:\(name)"
        }
    }

    /// What `--live` with no value means: the station's own sink.
    public static let defaultSource = LiveSource.stationSink

    /// The PCM format the source must deliver.
    public var format: LiveSampleFormat {
        switch self {
        case .pipe(_, let format), .standardInput(let format): format
        case .stationSink, .pulseSource: .station
        }
    }

    /// Whether the sound server captures it (the capture asks it for the station's format).
    public var isPulse: Bool {
        switch self {
        case .stationSink, .pulseSource: true
        case .pipe, .standardInput: false
        }
    }

    /// The name of the station's sink: `partyradio_` and the station's name in lower-case ASCII letters
    /// and digits, every other run of characters one `_` (a sink name is a PulseAudio identifier, and
    /// `pactl`/pavucontrol users type it), at most 48 characters; the same name every run, so that a
    /// run after a crash finds the sink the crashed one left.
    public static func pulseSinkName(station: String) -> String {
        var name = ""
        var gap = false
        for scalar in station.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                if gap && !name.isEmpty { name.append("_") }
                name.unicodeScalars.append(scalar)
                gap = false
            } else {
                gap = true
            }
        }
        if name.isEmpty { name = "station" }
        return "partyradio_" + String(name.prefix(48 - "partyradio_".count))
    }

    /// The sink's description in sound settings (pavucontrol, GNOME's output list): the station's name
    /// without the quotes and backslashes that PulseAudio's module arguments would take as syntax.
    public static func pulseSinkDescription(station: String) -> String {
        let plain = station.unicodeScalars.filter { !["\"", "'", "\\"].contains($0) && $0.value >= 0x20 }
        return "Party Radio: " + String(String.UnicodeScalarView(plain))
    }

    /// Why a `--live` value was refused: a sentence that says what to pass instead.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Parses a `--live` value: `pipe:PATH`, `pipe:PATH?sampleformat=48000:16:2`, `-` or
    /// `-?sampleformat=…`. A sample format other than the station's (48000:16:2: Opus at 48 kHz,
    /// 16-bit, stereo) is refused with both named: PCM has no header, so what the user says is all
    /// there is to check, and a wrong rate would play at the wrong speed.
    public static func parse(_ value: String) throws(Invalid) -> LiveSource {
        let (head, query) = splitQuery(value)
        let format = try sampleFormat(fromQuery: query, in: value)
        if head == "-" { return .standardInput(format: format) }
        if head.hasPrefix("pipe:") {
            let path = String(head.dropFirst("pipe:".count))
            guard !path.isEmpty else {
                throw Invalid(description: "'--live pipe:' needs a path, e.g. pipe:/tmp/snapfifo.")
            }
            guard !path.utf8.contains(0), path.utf8.count <= 4096 else {
                throw Invalid(description: "'--live' has a pipe path that is not a usable file name.")
            }
            return .pipe(path: path, format: format)
        }
        if head == "pulse" || head.hasPrefix("pulse:") {
            guard query == nil else {
                throw Invalid(
                    description: "'--live \(sanitised(head))' takes no ?sampleformat: the sound server delivers the "
                        + "station's 48000:16:2 itself.")
            }
            guard head != "pulse" else { return .stationSink }
            let name = String(head.dropFirst("pulse:".count))
            guard !name.isEmpty, name.unicodeScalars.allSatisfy({ (0x21...0x7e).contains($0.value) }), name.count <= 256
            else {
                throw Invalid(
                    description:
                        "'--live pulse:' needs a source's name, e.g. pulse:alsa_input.pci-0000_00_1f.3.analog-stereo "
                        + "('pactl list short sources' lists them).")
            }
            return .pulseSource(name)
        }
        throw Invalid(
            description: "'--live' takes pulse (the default), pulse:SOURCE, pipe:PATH[?sampleformat=48000:16:2] or - "
                + "(stdin); got '\(sanitised(value))'.")
    }

    private static func splitQuery(_ value: String) -> (String, Substring?) {
        guard let mark = value.lastIndex(of: "?") else { return (value, nil) }
        return (String(value[..<mark]), value[value.index(after: mark)...])
    }

    private static func sampleFormat(fromQuery query: Substring?, in value: String) throws(Invalid)
        -> LiveSampleFormat
    {
        guard let query else { return .station }
        var format = LiveSampleFormat.station
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "sampleformat" else {
                throw Invalid(
                    description: "'--live' takes only ?sampleformat=RATE:BITS:CHANNELS after the source; "
                        + "got '\(sanitised(String(pair)))'.")
            }
            guard let parsed = LiveSampleFormat(parsing: String(parts[1])) else {
                throw Invalid(
                    description: "'--live' sample format '\(sanitised(String(parts[1])))' is not RATE:BITS:CHANNELS "
                        + "(e.g. 48000:16:2).")
            }
            format = parsed
        }
        guard format == .station else {
            throw Invalid(
                description: "The live source's sample format \(format) does not match the station's "
                    + "\(LiveSampleFormat.station) (48 kHz, 16-bit, stereo): set the writer to 48000:16:2 "
                    + "(mpd: format \"48000:16:2\"; librespot and shairport-sync: 48 kHz S16LE stereo) and pass "
                    + "?sampleformat=48000:16:2 or nothing.")
        }
        return format
    }

    /// A value as it may be shown back: printable ASCII only, at most 80 characters.
    private static func sanitised(_ value: String) -> String {
        let printable = String(value.unicodeScalars.map { (0x20...0x7e).contains($0.value) ? Character($0) : "?" })
        return printable.count > 80 ? String(printable.prefix(79)) + "…" : printable
    }
}

/// Raw PCM's shape as Snapcast's `sampleformat` writes it: `RATE:BITS:CHANNELS`, little-endian
/// signed interleaved samples.
public struct LiveSampleFormat: Hashable, Sendable, CustomStringConvertible {
    public var rate: Int
    public var bits: Int
    public var channels: Int

    public init(rate: Int, bits: Int, channels: Int) {
        self.rate = rate
        self.bits = bits
        self.channels = channels
    }

    /// What a live station carries: Opus at 48 kHz, 16-bit stereo at the edges.
    public static let station = LiveSampleFormat(rate: 48_000, bits: 16, channels: 2)

    /// `48000:16:2`; nil unless three positive integers in range (1 Hz–768 kHz, 8/16/24/32 bits,
    /// 1–32 channels).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let rate = Int(parts[0]), let bits = Int(parts[1]), let channels = Int(parts[2]),
            (1...768_000).contains(rate), [8, 16, 24, 32].contains(bits), (1...32).contains(channels)
        else { return nil }
        self.init(rate: rate, bits: bits, channels: channels)
    }

    /// Bytes of one sample of every channel.
    public var bytesPerFrame: Int { bits / 8 * channels }

    public var description: String { "\(rate):\(bits):\(channels)" }
}
