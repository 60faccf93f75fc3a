import PartyRadioCore

extension Command {
    /// `partyradio speaker --name NAME [--room ROOM] [--station STATION] [options]`: a headless
    /// listener the station's DJ sets (docs/SPEAKERS.md).
    public struct SpeakerOptions: Equatable, Sendable {
        /// `--name`: how the DJ lists it (required).
        public var name: GuestName
        /// `--room`: the room the DJ sets it with (nil: none).
        public var room: GuestName?
        /// `--station`: name, unique name prefix or ID; nil: the one station on the air.
        public var station: String?
        /// `--json-events`: one JSON object per line instead of plain lines.
        public var jsonEvents = false
        /// `--trust-new-key`: accept a station that shows another key than the one met before.
        public var trustNewKey = false
        /// Audio, trace and clock-testing options.
        public var playback = PlaybackFlags()
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseSpeaker(_ arguments: [String]) throws(UsageError) -> SpeakerOptions {
        var scanner = ArgumentScanner(arguments, command: "speaker")
        var name: GuestName?
        var options = SpeakerOptions(name: GuestName.defaultName(user: "", host: ""))
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            if try options.playback.consume(option, from: &scanner) { continue }
            switch option {
            case "--name", "-n": name = try speakerName(scanner.value(for: option), flag: option)
            case "--room": options.room = try speakerName(scanner.value(for: option), flag: option)
            case "--station", "-s": options.station = try scanner.value(for: option)
            case "--json-events": options.jsonEvents = true
            case "--trust-new-key": options.trustNewKey = true
            default: throw scanner.unknown(option)
            }
        }
        guard scanner.positionals.isEmpty else {
            throw UsageError(
                "'speaker' takes no arguments (the station goes after --station); got '\(scanner.positionals[0])'.",
                command: "speaker")
        }
        guard let name else {
            throw UsageError(
                "'speaker' needs a name the DJ lists it by: --name NAME, e.g. --name Kitchen.", command: "speaker")
        }
        options.name = name
        return options
    }

    /// A speaker's name or room: 1–32 characters of plain text, as a guest's name.
    static func speakerName(_ raw: String, flag: String) throws(UsageError) -> GuestName {
        do { return try GuestName(validating: raw) } catch {
            let what = flag == "--room" ? "room" : "name"
            switch error {
            case .empty:
                throw UsageError("The \(what) after '\(flag)' is empty; give 1 to 32 characters.", command: "speaker")
            case .tooLong(let count):
                throw UsageError(
                    "The \(what) after '\(flag)' has \(count) characters; use at most 32.", command: "speaker")
            case .tooManyBytes(let bytes, let limit):
                throw UsageError(
                    "The \(what) after '\(flag)' takes \(bytes) bytes of UTF-8; use at most \(limit).",
                    command: "speaker")
            case .controlCharacters:
                throw UsageError(
                    "The \(what) after '\(flag)' contains control or invisible characters; use plain text.",
                    command: "speaker")
            }
        }
    }
}
