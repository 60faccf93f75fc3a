extension Command {
    /// `partyradio listen [STATION] [options]`
    public struct ListenOptions: Equatable, Sendable {
        /// Name, unique name prefix or ID; nil: the only station on the air.
        public var station: String?
        /// `--json-events`: one JSON object per line instead of the live view.
        public var jsonEvents = false
        /// `--timeout S`: how long to look for the station.
        public var timeout: Double = 10
        /// Audio, trace and clock-testing options.
        public var playback = PlaybackFlags()
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseListen(_ arguments: [String]) throws(UsageError) -> ListenOptions {
        var scanner = ArgumentScanner(arguments, command: "listen")
        var options = ListenOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            if try options.playback.consume(option, from: &scanner) { continue }
            switch option {
            case "--json-events": options.jsonEvents = true
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            default: throw scanner.unknown(option)
            }
        }
        guard scanner.positionals.count <= 1 else {
            throw UsageError(
                "'listen' takes at most one station; got \(scanner.positionals.count).", command: "listen")
        }
        options.station = scanner.positionals.first
        return options
    }
}
