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
        /// `--search TERM`: queue catalog results (all playable ones, or those `--pick`ed).
        public var search: String?
        /// `--pick N`: 1-based result numbers of `--search` to queue.
        public var picks: [Int] = []
        /// `--add ID`: catalog track IDs to queue.
        public var adds: [String] = []
        /// `--country CC` for the catalog; nil: from the locale.
        public var country: String?
        public var noExplicit = false
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
            case "--search": options.search = try scanner.value(for: option)
            case "--pick": options.picks += try numbers(for: option, from: &scanner)
            case "--add": options.adds += try scanner.value(for: option).split(separator: ",").map(String.init)
            case "--country": options.country = try country(for: option, from: &scanner)
            case "--no-explicit": options.noExplicit = true
            case "--json-events": options.jsonEvents = true
            case "--port": options.port = try scanner.integer(for: option, in: 0...65535)
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        guard let name else { throw UsageError("A station needs a name: pass --name \"My Party\".", command: "dj") }
        if !options.picks.isEmpty && options.search == nil {
            throw UsageError("'--pick' chooses among '--search' results; add --search TERM.", command: "dj")
        }
        if let bad = options.adds.first(where: { $0.isEmpty || !$0.allSatisfy(\.isNumber) }) {
            throw UsageError("'--add' takes numeric catalog track IDs; got '\(bad)'.", command: "dj")
        }
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

    /// `--pick 3` or `--pick 1,4`: result numbers from 1 to 200.
    private static func numbers(for option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> [Int] {
        let raw = try scanner.value(for: option)
        let numbers = raw.split(separator: ",").compactMap { Int($0) }.filter { (1...200).contains($0) }
        guard !numbers.isEmpty, numbers.count == raw.split(separator: ",").count else {
            throw UsageError("'\(option)' takes result numbers from 1 to 200, e.g. 2 or 1,3; got '\(raw)'.", command: scanner.command)
        }
        return numbers
    }

    /// A two-letter storefront country code.
    private static func country(for option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> String {
        let raw = try scanner.value(for: option)
        guard raw.count == 2, raw.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw UsageError("'\(option)' takes a two-letter country code such as us or de; got '\(raw)'.", command: scanner.command)
        }
        return raw.lowercased()
    }

    private static func noPositionals(_ scanner: ArgumentScanner) throws(UsageError) {
        if let extra = scanner.positionals.first {
            throw UsageError("Unexpected argument '\(extra)'.", command: scanner.command)
        }
    }
}
