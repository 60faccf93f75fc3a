extension Command {
    /// `partyradio stations [--timeout S] [--watch] [--json]`
    public struct StationsOptions: Equatable, Sendable {
        public var timeout: Double = 3
        public var watch = false
        public var json = false
        public var network = NetworkOptions()
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
