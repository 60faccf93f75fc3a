import PartyRadioCatalog

extension Command {
    /// `partyradio charts [--country CC] [--limit N]`
    public struct ChartsOptions: Equatable, Sendable {
        /// `--country CC`, else the locale's region, else us.
        public var country: String
        /// `--limit N`: how many songs, 1–200.
        public var limit: Int
        /// Base URLs, cache, timeout and `--json`.
        public var service: CatalogServiceOptions
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseCharts(_ arguments: [String], environment: [String: String], knobs: EnvironmentKnobs)
        throws(UsageError)
        -> ChartsOptions
    {
        let command = "charts"
        var scanner = ArgumentScanner(arguments, command: command)
        var options = ChartsOptions(
            country: Storefront.fromLocale(environment), limit: CatalogEndpoints.defaultChartLimit,
            service: CatalogServiceOptions(knobs: knobs))
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.service.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": options.country = try scanner.country(for: option)
            case "--limit": options.limit = try scanner.integer(for: option, in: CatalogEndpoints.chartLimits)
            default: throw scanner.unknown(option)
            }
        }
        if let extra = scanner.positionals.first {
            throw UsageError(
                "'charts' takes no arguments; got '\(extra)'. Use --country to pick a country.", command: command)
        }
        return options
    }
}
