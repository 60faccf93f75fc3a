import PartyRadioCatalog

extension Command {
    /// `partyradio charts [--country CC] [--limit N]`
    public struct ChartsOptions: Equatable, Sendable {
        public var country: String
        public var limit: Int
        public var service: CatalogServiceOptions
        public var common = CommonOptions()
    }

    static func parseCharts(_ arguments: [String], environment: [String: String]) throws(UsageError)
        -> ChartsOptions
    {
        let command = "charts"
        var scanner = ArgumentScanner(arguments, command: command)
        var options = ChartsOptions(
            country: Storefront.fromLocale(environment), limit: CatalogEndpoints.defaultChartLimit,
            service: CatalogServiceOptions(environment: environment))
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
