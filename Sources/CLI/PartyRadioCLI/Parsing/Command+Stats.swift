extension Command {
    /// `partyradio stats [--json] [--all] [options]`
    public struct StatsOptions: Equatable, Sendable {
        /// `--all`: every night; otherwise the latest one (the last DJ run).
        public var all = false
        /// `--json`: the result as JSON.
        public var json = false
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseStats(_ arguments: [String]) throws(UsageError) -> StatsOptions {
        var scanner = ArgumentScanner(arguments, command: "stats")
        var options = StatsOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            switch option {
            case "--all", "-a": options.all = true
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }
}
