extension Command {
    /// `partyradio doctor [--json] [--interface NAME] [--itunes-url URL] [options]`
    public struct DoctorOptions: Equatable, Sendable {
        /// `--json`: one object with every check.
        public var json = false
        /// `--timeout S`: how long the multicast self-test and the catalog may take.
        public var timeout: Double = 3
        /// `--itunes-url`, else `$PARTYRADIO_ITUNES_URL`, else Apple's.
        public var iTunesURL: String
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseDoctor(_ arguments: [String], environment: [String: String]) throws(UsageError) -> DoctorOptions {
        var scanner = ArgumentScanner(arguments, command: "doctor")
        var options = DoctorOptions(iTunesURL: CatalogServiceOptions(environment: environment).iTunesURL)
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if option != "--code", try options.network.consume(option, from: &scanner) { continue }
            switch option {
            case "--json": options.json = true
            case "--timeout": options.timeout = try scanner.seconds(for: option, in: 0.1...60)
            case "--itunes-url": options.iTunesURL = try scanner.url(for: option)
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }
}
