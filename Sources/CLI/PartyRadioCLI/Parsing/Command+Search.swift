import PartyRadioCatalog
import PartyRadioCore

extension Command {
    /// `partyradio search TERM...`
    public struct SearchOptions: Equatable, Sendable {
        /// The positional words joined by spaces (at most 500 bytes).
        public var term: String
        /// `--country CC`, else the locale's region, else us.
        public var country: String
        /// `--limit N`: 1–200 (1–25 with `--apple-music`).
        public var limit: Int
        /// False with `--no-explicit`: the search sends `explicit=No`.
        public var allowExplicit = true
        /// `--apple-music`: search the Apple Music API instead of iTunes Search.
        public var appleMusic = false
        /// `--types songs,playlists` (Apple Music only).
        public var types = ["songs"]
        /// Token or key for `--apple-music`.
        public var auth: AppleMusicAuthOptions
        /// Base URLs, cache, timeout and `--json`.
        public var service: CatalogServiceOptions
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseSearch(_ arguments: [String], environment: [String: String], knobs: EnvironmentKnobs)
        throws(UsageError)
        -> SearchOptions
    {
        let command = "search"
        var scanner = ArgumentScanner(arguments, command: command)
        var common = CommonOptions()
        var service = CatalogServiceOptions(knobs: knobs)
        var auth = AppleMusicAuthOptions(knobs: knobs)
        var country = Storefront.fromLocale(environment)
        var limit: Int?
        var allowExplicit = true
        var appleMusic = false
        var types: [String]?
        while let option = scanner.nextOption() {
            if try common.consume(option, from: &scanner) { continue }
            if try service.consume(option, from: &scanner) { continue }
            if try auth.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": country = try scanner.country(for: option)
            case "--limit": limit = try scanner.integer(for: option, in: CatalogEndpoints.searchLimits)
            case "--no-explicit", "--clean": allowExplicit = false
            case "--apple-music": appleMusic = true
            case "--types":
                let raw = try scanner.value(for: option)
                let list = raw.split(separator: ",").map { String($0).trimmingWhitespace() }
                guard !list.isEmpty, list.allSatisfy({ ["songs", "playlists"].contains($0) }) else {
                    throw UsageError(
                        "'--types' takes songs, playlists or songs,playlists; got '\(raw)'.", command: command)
                }
                types = list
            default: throw scanner.unknown(option)
            }
        }
        let term = scanner.positionals.joined(separator: " ").trimmingWhitespace()
        guard !term.isEmpty else {
            throw UsageError("Give a search term, e.g. 'partyradio search daft punk'.", command: command)
        }
        guard term.utf8.count <= 500 else {
            throw UsageError("The search term is too long (500 bytes at most).", command: command)
        }
        if types != nil && !appleMusic {
            throw UsageError("'--types' works with --apple-music only.", command: command)
        }
        if appleMusic {
            auth = try auth.validated(command: command)
            if let limit, !CatalogEndpoints.appleMusicLimits.contains(limit) {
                throw UsageError(
                    "With --apple-music, '--limit' goes from 1 to 25 (the API's page size); got '\(limit)'.",
                    command: command)
            }
        }
        let defaultLimit =
            appleMusic ? CatalogEndpoints.appleMusicLimits.upperBound : CatalogEndpoints.defaultSearchLimit
        return SearchOptions(
            term: term, country: country, limit: limit ?? defaultLimit, allowExplicit: allowExplicit,
            appleMusic: appleMusic, types: types ?? ["songs"], auth: auth, service: service, common: common)
    }
}
