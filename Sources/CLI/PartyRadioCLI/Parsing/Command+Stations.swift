extension Command {
    /// `partyradio stations [--timeout S] [--watch] [--json]`
    public struct StationsOptions: Equatable, Sendable {
        /// `--timeout S`: look for at most this long (it ends sooner once all answered).
        public var timeout: Double = 3
        /// `--watch`: follow stations as they come, change and go.
        public var watch = false
        /// `--json`: JSON (with `--watch`, one object per line).
        public var json = false
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseStations(_ arguments: [String]) throws(UsageError) -> StationsOptions {
        var scanner = ArgumentScanner(arguments, command: "stations")
        var options = StationsOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
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
}
