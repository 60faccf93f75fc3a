import PartyRadioCatalog
import PartyRadioNode

/// Where the catalog commands send requests and keep their cache; shared by search, lookup, charts.
public struct CatalogServiceOptions: Equatable, Sendable {
    /// `--itunes-url`, else `$PARTYRADIO_ITUNES_URL`, else https://itunes.apple.com.
    public var iTunesURL: String
    /// `--apple-music-url`, else `$PARTYRADIO_APPLE_MUSIC_URL`, else https://api.music.apple.com.
    public var appleMusicURL: String
    /// `--state-dir`, else `$XDG_STATE_HOME/partyradio`, else `~/.local/state/partyradio`.
    public var stateDir: String
    /// `--timeout SECONDS` for one request.
    public var timeout: Double = HTTPClient.defaultTimeout
    /// `--refresh`: ask the network even when the cache has a fresh answer.
    public var refresh = false
    /// `--no-cache`: neither read nor write the cache.
    public var useCache = true
    public var json = false
    public var verbose = false
    /// `--artwork-size N`: artwork URLs rewritten to N×N.
    public var artworkSize = ArtworkURL.defaultSize

    public init(environment: [String: String]) {
        iTunesURL =
            environment["PARTYRADIO_ITUNES_URL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? CatalogEndpoints.defaultITunesBaseURL
        appleMusicURL =
            environment["PARTYRADIO_APPLE_MUSIC_URL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? CatalogEndpoints.defaultAppleMusicBaseURL
        stateDir = StateDirectory.default(environment: environment)
    }

    static let help: [(String, String)] = [
        ("--json", "Print machine-readable JSON."),
        ("--refresh", "Ask the network even if the cache has a fresh answer."),
        ("--no-cache", "Neither read nor write the on-disk cache."),
        ("--state-dir <dir>", "Where the cache lives (default: $XDG_STATE_HOME/partyradio)."),
        ("--itunes-url <url>", "iTunes base URL (default: $PARTYRADIO_ITUNES_URL or https://itunes.apple.com)."),
        ("--timeout <seconds>", "Give up on a request after this long (default: 15)."),
        ("--artwork-size <n>", "Artwork URLs rewritten to n×n pixels (default: 600)."),
        ("-v, --verbose", "Show the URLs asked and cache use on stderr."),
    ]

    /// Consumes `option` if it is one of these; false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--itunes-url": iTunesURL = try Self.url(scanner.value(for: option), option, scanner.command)
        case "--apple-music-url": appleMusicURL = try Self.url(scanner.value(for: option), option, scanner.command)
        case "--state-dir":
            stateDir = try scanner.value(for: option)
            guard !stateDir.isEmpty else {
                throw UsageError("'--state-dir' needs a directory.", command: scanner.command)
            }
        case "--timeout": timeout = try scanner.seconds(for: option, in: 0.1...600)
        case "--refresh": refresh = true
        case "--no-cache": useCache = false
        case "--json": json = true
        case "-v", "--verbose": verbose = true
        case "--artwork-size": artworkSize = try scanner.integer(for: option, in: 30...5000)
        default: return false
        }
        return true
    }

    static func url(_ text: String, _ option: String, _ command: String) throws(UsageError) -> String {
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), text.count > 8 else {
            throw UsageError(
                "'\(option)' takes an http(s) URL such as http://127.0.0.1:8080; got '\(text)'.",
                command: command)
        }
        return text
    }

    /// The storefront from `--country` or the locale.
    static func country(_ text: String, command: String) throws(UsageError) -> String {
        guard let code = Storefront.normalized(text) else {
            throw UsageError(
                "'--country' takes a two-letter country code such as us or gb; got '\(text)'.",
                command: command)
        }
        return code
    }
}

/// How an Apple Music request is authorised: a ready token, or a `.p8` key to make one.
public struct AppleMusicAuthOptions: Equatable, Sendable {
    /// `--developer-token`, else `$PARTYRADIO_APPLE_MUSIC_TOKEN`.
    public var developerToken: String?
    /// `--key`, else `$PARTYRADIO_APPLE_MUSIC_KEY`.
    public var keyPath: String?
    /// `--team`, else `$PARTYRADIO_APPLE_MUSIC_TEAM_ID`.
    public var teamID: String?
    /// `--key-id`, else `$PARTYRADIO_APPLE_MUSIC_KEY_ID`.
    public var keyID: String?
    /// `--music-user-token`, else `$PARTYRADIO_MUSIC_USER_TOKEN`.
    public var musicUserToken: String?

    public init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        developerToken = value("PARTYRADIO_APPLE_MUSIC_TOKEN")
        keyPath = value("PARTYRADIO_APPLE_MUSIC_KEY")
        teamID = value("PARTYRADIO_APPLE_MUSIC_TEAM_ID")
        keyID = value("PARTYRADIO_APPLE_MUSIC_KEY_ID")
        musicUserToken = value("PARTYRADIO_MUSIC_USER_TOKEN")
    }

    static let help: [(String, String)] = [
        ("--developer-token <jwt>", "Apple Music developer token (default: $PARTYRADIO_APPLE_MUSIC_TOKEN)."),
        ("--key <file.p8>", "Make the token from this MusicKit key instead (with --team and --key-id)."),
        ("--team <id>", "Your 10-character Apple Developer Team ID."),
        ("--key-id <id>", "The 10-character ID of the .p8 key."),
        ("--music-user-token <t>", "Send a Music-User-Token (default: $PARTYRADIO_MUSIC_USER_TOKEN)."),
        ("--apple-music-url <url>", "Apple Music API base URL (default: https://api.music.apple.com)."),
    ]

    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--developer-token": developerToken = try scanner.value(for: option)
        case "--key": keyPath = try scanner.value(for: option)
        case "--team": teamID = try scanner.value(for: option)
        case "--key-id": keyID = try scanner.value(for: option)
        case "--music-user-token": musicUserToken = try scanner.value(for: option)
        default: return false
        }
        return true
    }

    /// Checks that a ready token, or a complete key triple to make one, is there. A ready token
    /// is used when given; otherwise one is made from the key.
    func validated(command: String) throws(UsageError) -> AppleMusicAuthOptions {
        if developerToken != nil { return self }
        guard keyPath != nil else {
            throw UsageError(
                "'--apple-music' needs a developer token: pass --developer-token (or set "
                    + "PARTYRADIO_APPLE_MUSIC_TOKEN), or --key, --team and --key-id to make one.", command: command)
        }
        try TokenOptions.checkIdentifiers(team: teamID, keyID: keyID, command: command)
        return self
    }
}

/// `partyradio search TERM...`
public struct SearchOptions: Equatable, Sendable {
    public var term: String
    public var country: String
    public var limit: Int
    /// False with `--no-explicit`: the search sends `explicit=No`.
    public var allowExplicit = true
    /// `--apple-music`: search the Apple Music API instead of iTunes Search.
    public var appleMusic = false
    /// `--types songs,playlists` (Apple Music only).
    public var types = ["songs"]
    public var auth: AppleMusicAuthOptions
    public var service: CatalogServiceOptions
}

/// `partyradio lookup ID...`
public struct LookupOptions: Equatable, Sendable {
    public var ids: [String]
    public var country: String
    public var appleMusic = false
    /// `--playlist ID` with `--apple-music`: the tracks of a catalog playlist instead of IDs.
    public var playlist: String?
    public var auth: AppleMusicAuthOptions
    public var service: CatalogServiceOptions
}

/// `partyradio charts`
public struct ChartsOptions: Equatable, Sendable {
    public var country: String
    public var limit: Int
    public var service: CatalogServiceOptions
}

/// `partyradio token --key K.p8 --team T --key-id K [--ttl DAYS]`
public struct TokenOptions: Equatable, Sendable {
    public static let defaultLifetimeDays = 30
    public var keyPath: String
    public var teamID: String
    public var keyID: String
    public var lifetimeDays: Int
    public var json = false

    static func checkIdentifiers(team: String?, keyID: String?, command: String) throws(UsageError) {
        guard let team else {
            throw UsageError(
                "Pass your Apple Developer Team ID with --team (10 characters, e.g. ABCDE12345).",
                command: command)
        }
        guard DeveloperTokenClaims.isAppleIdentifier(team) else {
            throw UsageError(
                "'--team' takes your 10-character Team ID (capital letters and digits); got '\(team)'.",
                command: command)
        }
        guard let keyID else {
            throw UsageError(
                "Pass the key's 10-character ID with --key-id (it is in the AuthKey_<ID>.p8 file name).",
                command: command)
        }
        guard DeveloperTokenClaims.isAppleIdentifier(keyID) else {
            throw UsageError(
                "'--key-id' takes the key's 10-character ID (capital letters and digits); got '\(keyID)'.",
                command: command)
        }
    }
}

/// What a catalog command line asks for.
public enum CatalogInvocation: Equatable, Sendable {
    case help(command: String)
    case search(SearchOptions)
    case lookup(LookupOptions)
    case charts(ChartsOptions)
    case token(TokenOptions)
}

/// Turns a catalog command's arguments into a ``CatalogInvocation``. Pure: the environment is an
/// argument, nothing is read or written.
public enum CatalogCommandParser {
    public static func parse(_ command: String, _ arguments: [String], environment: [String: String])
        throws(UsageError) -> CatalogInvocation
    {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) && !arguments.contains("--") {
            return .help(command: command)
        }
        switch command {
        case "search": return .search(try search(arguments, environment))
        case "lookup": return .lookup(try lookup(arguments, environment))
        case "charts": return .charts(try charts(arguments, environment))
        case "token": return .token(try token(arguments, environment))
        default: throw UsageError("Unknown command '\(command)'.")
        }
    }

    static func search(_ arguments: [String], _ environment: [String: String]) throws(UsageError) -> SearchOptions {
        let command = "search"
        var scanner = ArgumentScanner(arguments, command: command)
        var service = CatalogServiceOptions(environment: environment)
        var auth = AppleMusicAuthOptions(environment: environment)
        var country = Storefront.fromLocale(environment)
        var limit: Int?
        var allowExplicit = true
        var appleMusic = false
        var types: [String]?
        while let option = scanner.nextOption() {
            if try service.consume(option, from: &scanner) { continue }
            if try auth.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": country = try CatalogServiceOptions.country(scanner.value(for: option), command: command)
            case "--limit": limit = try scanner.integer(for: option, in: CatalogEndpoints.searchLimits)
            case "--no-explicit", "--clean": allowExplicit = false
            case "--apple-music": appleMusic = true
            case "--types":
                let raw = try scanner.value(for: option)
                let list = raw.split(separator: ",").map { $0.trimmingCharacters() }
                guard !list.isEmpty, list.allSatisfy({ ["songs", "playlists"].contains($0) }) else {
                    throw UsageError(
                        "'--types' takes songs, playlists or songs,playlists; got '\(raw)'.",
                        command: command)
                }
                types = list
            default: throw scanner.unknown(option)
            }
        }
        let term = scanner.positionals.joined(separator: " ").trimmingCharacters()
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
            appleMusic: appleMusic, types: types ?? ["songs"], auth: auth, service: service)
    }

    static func lookup(_ arguments: [String], _ environment: [String: String]) throws(UsageError) -> LookupOptions {
        let command = "lookup"
        var scanner = ArgumentScanner(arguments, command: command)
        var service = CatalogServiceOptions(environment: environment)
        var auth = AppleMusicAuthOptions(environment: environment)
        var country = Storefront.fromLocale(environment)
        var appleMusic = false
        var playlist: String?
        while let option = scanner.nextOption() {
            if try service.consume(option, from: &scanner) { continue }
            if try auth.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": country = try CatalogServiceOptions.country(scanner.value(for: option), command: command)
            case "--apple-music": appleMusic = true
            case "--playlist":
                let id = try scanner.value(for: option)
                guard id.hasPrefix("pl."), id.count > 3,
                    id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) })
                else {
                    throw UsageError(
                        "'--playlist' takes an Apple Music playlist ID such as pl.u-… or pl.4ae2…; got '\(id)'.",
                        command: command)
                }
                playlist = id
            default: throw scanner.unknown(option)
            }
        }
        if let playlist {
            guard appleMusic else {
                throw UsageError("'--playlist' works with --apple-music only.", command: command)
            }
            guard scanner.positionals.isEmpty else {
                throw UsageError("Give either track IDs or --playlist, not both.", command: command)
            }
            auth = try auth.validated(command: command)
            return LookupOptions(
                ids: [], country: country, appleMusic: true, playlist: playlist, auth: auth, service: service)
        }
        var ids: [String] = []
        for argument in scanner.positionals {
            for id in argument.split(separator: ",").map({ $0.trimmingCharacters() }) where !id.isEmpty {
                guard id.allSatisfy({ $0.isASCII && $0.isNumber }), id.count <= 20 else {
                    throw UsageError("Track IDs are numbers such as 617154366; got '\(id)'.", command: command)
                }
                if !ids.contains(id) { ids.append(id) }
            }
        }
        guard !ids.isEmpty else {
            throw UsageError("Give one or more track IDs, e.g. 'partyradio lookup 617154366'.", command: command)
        }
        guard ids.count <= 200 else { throw UsageError("Look up at most 200 IDs at once.", command: command) }
        if appleMusic { auth = try auth.validated(command: command) }
        return LookupOptions(
            ids: ids, country: country, appleMusic: appleMusic, playlist: nil, auth: auth, service: service)
    }

    static func charts(_ arguments: [String], _ environment: [String: String]) throws(UsageError) -> ChartsOptions {
        let command = "charts"
        var scanner = ArgumentScanner(arguments, command: command)
        var service = CatalogServiceOptions(environment: environment)
        var country = Storefront.fromLocale(environment)
        var limit = CatalogEndpoints.defaultChartLimit
        while let option = scanner.nextOption() {
            if try service.consume(option, from: &scanner) { continue }
            switch option {
            case "--country": country = try CatalogServiceOptions.country(scanner.value(for: option), command: command)
            case "--limit": limit = try scanner.integer(for: option, in: CatalogEndpoints.chartLimits)
            default: throw scanner.unknown(option)
            }
        }
        if let extra = scanner.positionals.first {
            throw UsageError(
                "'charts' takes no arguments; got '\(extra)'. Use --country to pick a country.",
                command: command)
        }
        return ChartsOptions(country: country, limit: limit, service: service)
    }

    static func token(_ arguments: [String], _ environment: [String: String]) throws(UsageError) -> TokenOptions {
        let command = "token"
        var scanner = ArgumentScanner(arguments, command: command)
        let fromEnvironment = AppleMusicAuthOptions(environment: environment)
        var keyPath = fromEnvironment.keyPath
        var team = fromEnvironment.teamID
        var keyID = fromEnvironment.keyID
        var days = TokenOptions.defaultLifetimeDays
        var json = false
        while let option = scanner.nextOption() {
            switch option {
            case "--key": keyPath = try scanner.value(for: option)
            case "--team": team = try scanner.value(for: option)
            case "--key-id": keyID = try scanner.value(for: option)
            case "--json": json = true
            case "--ttl":
                let raw = try scanner.value(for: option)
                let digits = raw.hasSuffix("d") ? String(raw.dropLast()) : raw
                guard let value = Int(digits), value >= 1 else {
                    throw UsageError(
                        "'--ttl' takes a whole number of days from 1 to 180; got '\(raw)'.", command: command)
                }
                guard value <= DeveloperTokenClaims.maximumLifetimeDays else {
                    throw UsageError(
                        "'--ttl' may be at most 180 days: Apple refuses developer tokens that live longer than six "
                            + "months; got \(value).", command: command)
                }
                days = value
            default: throw scanner.unknown(option)
            }
        }
        if let extra = scanner.positionals.first {
            throw UsageError("'token' takes no arguments; got '\(extra)'. Pass the key with --key.", command: command)
        }
        guard let keyPath, !keyPath.isEmpty else {
            throw UsageError("Pass your MusicKit key with --key AuthKey_XXXXXXXXXX.p8.", command: command)
        }
        try TokenOptions.checkIdentifiers(team: team, keyID: keyID, command: command)
        return TokenOptions(keyPath: keyPath, teamID: team!, keyID: keyID!, lifetimeDays: days, json: json)
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
