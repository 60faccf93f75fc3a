import PartyRadioCore

/// A parsed command line. ``parse(_:)`` is a pure function from arguments to this value.
public enum Command: Equatable, Sendable {
    case dj(DJOptions)
    case listen(ListenOptions)
    case stations(StationsOptions)
    case vote(VoteOptions)
    /// `--help` of a command (nil: the top level).
    case help(String?)
    case version

    public struct DJOptions: Equatable, Sendable {
        public var name: StationName
        public var libraries: [String] = []
        public var jsonEvents = false
        public var port: UInt16 = 0
        public var playback = PlaybackFlags()
        public var common = CommonOptions()
    }

    public struct ListenOptions: Equatable, Sendable {
        public var station: String?
        public var jsonEvents = false
        public var timeout: Double = 10
        public var playback = PlaybackFlags()
        public var common = CommonOptions()
    }

    public struct StationsOptions: Equatable, Sendable {
        public var timeout: Double = 3
        public var watch = false
        public var json = false
        public var common = CommonOptions()
    }

    public struct VoteOptions: Equatable, Sendable {
        public var choice: VoteChoice
        public var station: String?
        public var timeout: Double = 10
        public var json = false
        public var common = CommonOptions()
    }

    public static let names = ["dj", "listen", "stations", "vote"]

    /// Parses `partyradio <command> [options]` (arguments without the program name).
    public static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help(nil) }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") { return .help(first) }
        switch first {
        case "-h", "--help", "help": return .help(rest.first)
        case "--version", "version": return .version
        case "dj": return .dj(try parseDJ(rest))
        case "listen": return .listen(try parseListen(rest))
        case "stations": return .stations(try parseStations(rest))
        case "vote": return .vote(try parseVote(rest))
        default: throw UsageError("Unknown command '\(first)'.")
        }
    }

    static func parseDJ(_ arguments: [String]) throws(UsageError) -> DJOptions {
        var scanner = ArgumentScanner(arguments, command: "dj")
        var name: String?
        var options = DJOptions(name: try! StationName(validating: "x"))
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.playback.consume(option, from: &scanner) { continue }
            switch option {
            case "--name", "-n": name = try scanner.value(for: option)
            case "--library", "-l": options.libraries.append(try scanner.value(for: option))
            case "--json-events": options.jsonEvents = true
            case "--port": options.port = try scanner.integer(for: option, in: 0...65535)
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        guard let name else { throw UsageError("A station needs a name: pass --name \"My Party\".", command: "dj") }
        do { options.name = try StationName(validating: name) } catch {
            switch error {
            case .empty: throw UsageError("The station name is empty; give 1 to 60 characters.", command: "dj")
            case .tooLong(let count):
                throw UsageError("The station name has \(count) characters; use at most 60.", command: "dj")
            case .controlCharacters:
                throw UsageError("The station name contains control characters; use plain text.", command: "dj")
            }
        }
        return options
    }

    static func parseListen(_ arguments: [String]) throws(UsageError) -> ListenOptions {
        var scanner = ArgumentScanner(arguments, command: "listen")
        var options = ListenOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.playback.consume(option, from: &scanner) { continue }
            switch option {
            case "--json-events": options.jsonEvents = true
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            default: throw scanner.unknown(option)
            }
        }
        guard scanner.positionals.count <= 1 else {
            throw UsageError("'listen' takes at most one station; got \(scanner.positionals.count).", command: "listen")
        }
        options.station = scanner.positionals.first
        return options
    }

    static func parseStations(_ arguments: [String]) throws(UsageError) -> StationsOptions {
        var scanner = ArgumentScanner(arguments, command: "stations")
        var options = StationsOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            switch option {
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            case "--watch", "-w": options.watch = true
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }

    static func parseVote(_ arguments: [String]) throws(UsageError) -> VoteOptions {
        var scanner = ArgumentScanner(arguments, command: "vote")
        var station: String?
        var timeout = 10.0
        var json = false
        var common = CommonOptions()
        while let option = scanner.nextOption() {
            if try common.consume(option, from: &scanner) { continue }
            switch option {
            case "--station", "-s": station = try scanner.value(for: option)
            case "--timeout": timeout = try scanner.seconds(for: option)
            case "--json": json = true
            default: throw scanner.unknown(option)
            }
        }
        guard scanner.positionals.count == 1, let choice = VoteChoice(name: scanner.positionals[0].lowercased()) else {
            throw UsageError("Say how to vote: 'up', 'down' or 'clear'.", command: "vote")
        }
        return VoteOptions(choice: choice, station: station, timeout: timeout, json: json, common: common)
    }

    private static func noPositionals(_ scanner: ArgumentScanner) throws(UsageError) {
        if let extra = scanner.positionals.first {
            throw UsageError("Unexpected argument '\(extra)'.", command: scanner.command)
        }
    }
}
