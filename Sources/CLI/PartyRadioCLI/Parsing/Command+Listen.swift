import PartyRadioCore

extension Command {
    /// `partyradio listen [STATION] [options]`
    public struct ListenOptions: Equatable, Sendable {
        /// Name, unique name prefix or ID; nil: the only station on the air.
        public var station: String?
        /// `--json-events`: one JSON object per line instead of the live view.
        public var jsonEvents = false
        /// `--timeout S`: how long to look for the station.
        public var timeout: Double = 10
        /// `--as NAME`: the name the DJ's listener list shows; nil: `user@host`.
        public var displayName: GuestName?
        /// `--trust-new-key`: accept a station that shows another key than the one met before.
        public var trustNewKey = false
        /// `--latency-extra MS`: a live station plays this much later here than the station's delay.
        public var latencyExtraMs = 0
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
            case "--as": options.displayName = try guestName(scanner.value(for: option), command: "listen")
            case "--trust-new-key": options.trustNewKey = true
            case "--latency-extra": options.latencyExtraMs = try scanner.integer(for: option, in: 0...1000)
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

    /// A guest name for `--as`: 1–32 characters, plain text.
    static func guestName(_ raw: String, command: String) throws(UsageError) -> GuestName {
        do { return try GuestName(validating: raw) } catch {
            switch error {
            case .empty: throw UsageError("The name after '--as' is empty; give 1 to 32 characters.", command: command)
            case .tooLong(let count):
                throw UsageError("The name after '--as' has \(count) characters; use at most 32.", command: command)
            case .tooManyBytes(let bytes, let limit):
                throw UsageError(
                    "The name after '--as' takes \(bytes) bytes of UTF-8; use at most \(limit) "
                        + "(accented letters take 2 bytes, emoji 4).", command: command)
            case .controlCharacters:
                throw UsageError(
                    "The name after '--as' contains control or invisible characters (or a letter with more than 3 accents); use plain text.",
                    command: command)
            }
        }
    }
}
