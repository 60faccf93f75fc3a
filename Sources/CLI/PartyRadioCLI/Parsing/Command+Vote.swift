import PartyRadioCore

extension Command {
    /// `partyradio vote up|down|clear [--request ID] [options]`
    public struct VoteOptions: Equatable, Sendable {
        /// `up`, `down` or `clear`.
        public var choice: VoteChoice
        /// `--request ID`: vote on this waiting request (as `partyradio queue` numbers it) instead of
        /// the track playing now.
        public var request: UInt32?
        /// `--station S`: name, unique name prefix or ID; nil: the only station on the air.
        public var station: String?
        /// `--timeout S`: give up after this long (exit code 3).
        public var timeout: Double = 10
        /// `--json`: the result as JSON.
        public var json = false
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseVote(_ arguments: [String]) throws(UsageError) -> VoteOptions {
        var scanner = ArgumentScanner(arguments, command: "vote")
        var options = VoteOptions(choice: .clear)
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            switch option {
            case "--station", "-s": options.station = try scanner.value(for: option)
            case "--request", "-r":
                let raw = try scanner.value(for: option)
                guard let id = UInt32(raw.drop { $0 == "#" }), id > 0 else {
                    throw UsageError(
                        "'--request' takes a request's number as 'partyradio queue' shows it, e.g. 3; got '\(raw)'.",
                        command: "vote")
                }
                options.request = id
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        guard scanner.positionals.count == 1, let choice = VoteChoice(name: scanner.positionals[0].lowercased())
        else {
            throw UsageError("Say how to vote: 'up', 'down' or 'clear'.", command: "vote")
        }
        options.choice = choice
        return options
    }
}
