extension Command {
    /// `partyradio queue [options]`
    public struct QueueOptions: Equatable, Sendable {
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

    static func parseQueue(_ arguments: [String]) throws(UsageError) -> QueueOptions {
        var scanner = ArgumentScanner(arguments, command: "queue")
        var options = QueueOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            switch option {
            case "--station", "-s": options.station = try scanner.value(for: option)
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }
}
