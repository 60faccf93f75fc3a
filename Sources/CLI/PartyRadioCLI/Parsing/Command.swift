/// A parsed command line: one case per command. ``parse(_:environment:)`` is the one pure
/// function from arguments to this value, for every command.
public enum Command: Equatable, Sendable {
    case dj(DJOptions)
    case listen(ListenOptions)
    case speaker(SpeakerOptions)
    case speakers(SpeakersOptions)
    case speakerSet(SpeakerSetOptions)
    case stations(StationsOptions)
    case vote(VoteOptions)
    case chat(ChatOptions)
    case request(RequestOptions)
    case queue(QueueOptions)
    case stats(StatsOptions)
    case search(SearchOptions)
    case lookup(LookupOptions)
    case charts(ChartsOptions)
    case token(TokenOptions)
    /// `--help` of a command (nil: the top level).
    case help(String?)
    case version
    /// `partyradio doctor`: what this machine can do, checked.
    case doctor(DoctorOptions)
    /// `partyradio man`: the manual page.
    case manPage
    /// `partyradio completion bash|zsh`: a completion script.
    case completion(Shell)

    /// Every command, in the order the top-level help lists them.
    public static let names = [
        "dj", "stations", "listen", "speaker", "speakers", "speaker-set", "vote", "chat", "request", "queue", "stats",
        "search", "lookup",
        "charts", "token",
    ]

    /// Parses `partyradio <command> [options]` (arguments without the program name).
    ///
    /// `-h` or `--help` anywhere before a `--` asks for the command's help, whatever else the line
    /// holds. Pure: the environment is an argument, nothing is read or written.
    /// - Parameters:
    ///   - environment: the locale, whose country is the catalog's storefront by default.
    ///   - knobs: the `PARTYRADIO_*` variables: the catalog's base URLs and Apple Music credentials.
    public static func parse(
        _ arguments: [String], environment: [String: String] = [:], knobs: EnvironmentKnobs = EnvironmentKnobs()
    ) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help(nil) }
        let rest = Array(arguments.dropFirst())
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            return .help(first)
        }
        // `--version` works on every command, as `--help` does.
        if rest.prefix(while: { $0 != "--" }).contains("--version") { return .version }
        switch first {
        case "-h", "--help", "help": return .help(rest.first)
        case "--version", "version": return .version
        case "dj": return .dj(try parseDJ(rest))
        case "listen": return .listen(try parseListen(rest))
        case "speaker": return .speaker(try parseSpeaker(rest))
        case "speakers": return .speakers(try parseSpeakers(rest))
        case "speaker-set": return .speakerSet(try parseSpeakerSet(rest))
        case "stations": return .stations(try parseStations(rest))
        case "vote": return .vote(try parseVote(rest))
        case "chat": return .chat(try parseChat(rest))
        case "request": return .request(try parseRequest(rest))
        case "queue": return .queue(try parseQueue(rest))
        case "stats": return .stats(try parseStats(rest))
        case "search": return .search(try parseSearch(rest, environment: environment, knobs: knobs))
        case "lookup": return .lookup(try parseLookup(rest, environment: environment, knobs: knobs))
        case "charts": return .charts(try parseCharts(rest, environment: environment, knobs: knobs))
        case "token": return .token(try parseToken(rest, knobs: knobs))
        case "doctor": return .doctor(try parseDoctor(rest, knobs: knobs))
        case "man": return try parseMan(rest)
        case "completion": return try parseCompletion(rest)
        default: throw UsageError("Unknown command '\(first)'.")
        }
    }

    /// The command's name, as the help hint and the top-level help spell it (nil for help and version).
    public var name: String? {
        switch self {
        case .dj: "dj"
        case .listen: "listen"
        case .speaker: "speaker"
        case .speakers: "speakers"
        case .speakerSet: "speaker-set"
        case .stations: "stations"
        case .vote: "vote"
        case .chat: "chat"
        case .request: "request"
        case .queue: "queue"
        case .stats: "stats"
        case .search: "search"
        case .lookup: "lookup"
        case .charts: "charts"
        case .token: "token"
        case .doctor: "doctor"
        case .manPage: "man"
        case .completion: "completion"
        case .help, .version: nil
        }
    }

    /// The options every command takes (nil for help and version).
    public var common: CommonOptions? {
        switch self {
        case .dj(let options): options.common
        case .listen(let options): options.common
        case .speaker(let options): options.common
        case .speakers(let options): options.common
        case .speakerSet(let options): options.common
        case .stations(let options): options.common
        case .vote(let options): options.common
        case .chat(let options): options.common
        case .request(let options): options.common
        case .queue(let options): options.common
        case .stats(let options): options.common
        case .search(let options): options.common
        case .lookup(let options): options.common
        case .charts(let options): options.common
        case .token(let options): options.common
        case .doctor(let options): options.common
        case .help, .version, .manPage, .completion: nil
        }
    }

    /// Fails on a positional argument where the command takes none.
    static func noPositionals(_ scanner: ArgumentScanner) throws(UsageError) {
        if let extra = scanner.positionals.first {
            throw UsageError("Unexpected argument '\(extra)'.", command: scanner.command)
        }
    }
}
