import PartyRadioCore

extension Command {
    /// `partyradio doctor [--json] [--interface NAME] [--audio-driver NAME] [--no-audio] [--port N]
    /// [--itunes-url URL] [options]`
    public struct DoctorOptions: Equatable, Sendable {
        /// `--json`: one object with every check.
        public var json = false
        /// `--timeout S`: how long the multicast self-test and the catalog may take.
        public var timeout: Double = 3
        /// `--itunes-url`, else ``EnvironmentKnobs/iTunesURL``.
        public var iTunesURL: String
        /// `--audio-driver NAME`: the mpv output to try (nil: the first that works, as `listen` does).
        public var audioDriver: String?
        /// `--no-audio`: this machine plays nothing, so the audio check is skipped.
        public var noAudio = false
        /// `--port N`: the station's UDP port the firewall must let in (0: any high port).
        public var port: UInt16 = 0
        /// `--live [SOURCE]`: also check that a live station's source can be opened (no value: `pulse`).
        public var live: LiveSource?
        /// `--speaker`: also check that a live station can play here (a speaker's or listener's output).
        public var speaker = false
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseDoctor(_ arguments: [String], knobs: EnvironmentKnobs) throws(UsageError) -> DoctorOptions {
        var scanner = ArgumentScanner(arguments, command: "doctor")
        var options = DoctorOptions(iTunesURL: knobs.iTunesURL)
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            // The doctor checks this machine's link: no join code, and no DNS domain.
            if !["--code", "--domain", "--dns-server"].contains(option),
                try options.network.consume(option, from: &scanner)
            {
                continue
            }
            switch option {
            case "--json": options.json = true
            case "--timeout": options.timeout = try scanner.seconds(for: option, in: 0.1...60)
            case "--itunes-url": options.iTunesURL = try scanner.url(for: option)
            case "--audio-driver": options.audioDriver = try scanner.value(for: option)
            case "--no-audio": options.noAudio = true
            case "--speaker": options.speaker = true
            case "--port": options.port = try scanner.integer(for: option, in: 0...65535)
            case "--live":
                guard let raw = scanner.optionalValue(for: option) else {
                    options.live = .defaultSource
                    continue
                }
                do throws(LiveSource.Invalid) { options.live = try LiveSource.parse(raw) } catch {
                    throw UsageError(error.description, command: "doctor")
                }
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }
}
