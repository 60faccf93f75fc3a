import PartyRadioCatalog
import PartyRadioCore

extension Command {
    /// `partyradio lookup ID...`
    public struct LookupOptions: Equatable, Sendable {
        /// Track IDs, without duplicates, in the order given (empty with `--playlist`).
        public var ids: [String]
        /// `--country CC`, else the locale's region, else us.
        public var country: String
        /// `--apple-music`: the Apple Music API instead of iTunes Lookup.
        public var appleMusic = false
        /// `--playlist ID` with `--apple-music`: the tracks of a catalog playlist instead of IDs.
        public var playlist: String?
        /// Token or key for `--apple-music`.
        public var auth: AppleMusicAuthOptions
        /// Base URLs, cache, timeout and `--json`.
        public var service: CatalogServiceOptions
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseLookup(_ arguments: [String], environment: [String: String], knobs: EnvironmentKnobs)
        throws(UsageError)
        -> LookupOptions
    {
        let command = "lookup"
        var scanner = ArgumentScanner(arguments, command: command)
        var options = LookupOptions(
            ids: [], country: Storefront.fromLocale(environment), auth: AppleMusicAuthOptions(knobs: knobs),
            service: CatalogServiceOptions(knobs: knobs))
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.service.consume(option, from: &scanner) { continue }
            if try options.auth.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": options.country = try scanner.country(for: option)
            case "--apple-music": options.appleMusic = true
            case "--playlist": options.playlist = try playlist(for: option, from: &scanner)
            default: throw scanner.unknown(option)
            }
        }
        if options.playlist != nil {
            guard options.appleMusic else {
                throw UsageError("'--playlist' works with --apple-music only.", command: command)
            }
            guard scanner.positionals.isEmpty else {
                throw UsageError("Give either track IDs or --playlist, not both.", command: command)
            }
            options.auth = try options.auth.validated(command: command)
            return options
        }
        for argument in scanner.positionals {
            for id in argument.split(separator: ",").map({ String($0).trimmingWhitespace() }) where !id.isEmpty {
                guard id.allSatisfy({ $0.isASCII && $0.isNumber }), id.count <= 20 else {
                    throw UsageError("Track IDs are numbers such as 617154366; got '\(id)'.", command: command)
                }
                if !options.ids.contains(id) { options.ids.append(id) }
            }
        }
        guard !options.ids.isEmpty else {
            throw UsageError("Give one or more track IDs, e.g. 'partyradio lookup 617154366'.", command: command)
        }
        guard options.ids.count <= 200 else {
            throw UsageError("Look up at most 200 IDs at once.", command: command)
        }
        if options.appleMusic { options.auth = try options.auth.validated(command: command) }
        return options
    }

    /// An Apple Music playlist ID: `pl.` and letters, digits, `.`, `-`, `_`.
    private static func playlist(for option: String, from scanner: inout ArgumentScanner) throws(UsageError)
        -> String
    {
        let id = try scanner.value(for: option)
        guard id.hasPrefix("pl."), id.count > 3,
            id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) })
        else {
            throw UsageError(
                "'--playlist' takes an Apple Music playlist ID such as pl.u-… or pl.4ae2…; got '\(id)'.",
                command: scanner.command)
        }
        return id
    }
}
