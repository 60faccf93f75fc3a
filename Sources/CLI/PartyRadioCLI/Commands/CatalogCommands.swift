import Foundation
import PartyRadioCatalog

/// The catalog commands — `search`, `lookup`, `charts`, `token` — behind one entry point the
/// dispatcher calls.
public enum CatalogCommands {
    /// The command names this type handles.
    public static let names: Set<String> = ["search", "lookup", "charts", "token"]

    /// The help page of one of ``names``; nil for any other command.
    public static func help(for command: String) -> HelpText? { CatalogHelp.text(for: command) }

    /// Runs `command` with its `arguments` (the words after the command name).
    /// - Returns: the exit code: 0 success, 1 runtime failure, 2 usage error.
    public static func run(_ command: String, _ arguments: [String], environment: [String: String]) async -> Int32 {
        await run(command, arguments, environment: environment, console: .standard)
    }

    /// ``run(_:_:environment:)`` writing to `console` (tests collect the output).
    public static func run(
        _ command: String, _ arguments: [String], environment: [String: String], console: Console,
        clock: @escaping @Sendable () -> Double = Catalog.systemTime
    ) async -> Int32 {
        let invocation: CatalogInvocation
        do {
            invocation = try CatalogCommandParser.parse(command, arguments, environment: environment)
        } catch {
            console.error(error.message, hint: error.hint)
            return ExitCode.usage.rawValue
        }
        do {
            switch invocation {
            case .help(let name):
                console.out(help(for: name)?.rendered ?? "No help for '\(name)'.")
            case .search(let options): try await search(options, console: console, clock: clock)
            case .lookup(let options): try await lookup(options, console: console, clock: clock)
            case .charts(let options): try await charts(options, console: console, clock: clock)
            case .token(let options): try token(options, console: console, clock: clock)
            }
            return ExitCode.success.rawValue
        } catch let error as CatalogError {
            console.error(error.message, hint: "See 'partyradio \(command) --help'.")
            return ExitCode.failure.rawValue
        } catch {
            console.error("\(error)", hint: "See 'partyradio \(command) --help'.")
            return ExitCode.failure.rawValue
        }
    }

    // MARK: Commands

    static func search(_ options: SearchOptions, console: Console, clock: @escaping @Sendable () -> Double)
        async throws
    {
        let catalog = makeCatalog(options.service, console: console, clock: clock)
        let result: CatalogResult
        if options.appleMusic {
            let credentials = try credentials(options.auth, clock: clock)
            result = try await catalog.appleMusicSearch(
                options.term, storefront: options.country, types: options.types, limit: options.limit,
                allowExplicit: options.allowExplicit, credentials: credentials, refresh: options.service.refresh)
        } else {
            result = try await catalog.searchResult(
                options.term, country: options.country, limit: options.limit, allowExplicit: options.allowExplicit,
                refresh: options.service.refresh)
        }
        report(result, service: options.service, console: console)
        if options.service.json {
            console.out(
                try encode(
                    SearchReport(
                        source: options.appleMusic ? "apple-music" : "itunes", term: options.term,
                        country: options.country, limit: options.limit, explicit: options.allowExplicit,
                        cached: result.fromCache, ageSeconds: result.age, count: result.tracks.count,
                        tracks: result.tracks, playlists: options.appleMusic ? result.page.playlists : nil,
                        skipped: result.page.skipped, notices: result.notices)))
            return
        }
        if result.tracks.isEmpty && result.page.playlists.isEmpty {
            console.out("No songs found for '\(options.term)' in the \(options.country) store.")
            return
        }
        var sections: [String] = []
        if !result.tracks.isEmpty { sections.append(CatalogTable.render(result.tracks)) }
        if !result.page.playlists.isEmpty { sections.append(CatalogTable.render(result.page.playlists)) }
        sections.append(footer(count: result.tracks.count, noun: "song", result: result))
        console.out(sections.joined(separator: "\n\n"))
    }

    static func lookup(_ options: LookupOptions, console: Console, clock: @escaping @Sendable () -> Double)
        async throws
    {
        let catalog = makeCatalog(options.service, console: console, clock: clock)
        let result: CatalogResult
        if let playlist = options.playlist {
            result = try await catalog.appleMusicPlaylist(
                playlist, storefront: options.country, credentials: try credentials(options.auth, clock: clock),
                refresh: options.service.refresh)
        } else if options.appleMusic {
            result = try await catalog.appleMusicSongs(
                options.ids, storefront: options.country, credentials: try credentials(options.auth, clock: clock),
                refresh: options.service.refresh)
        } else {
            result = try await catalog.lookupResult(
                options.ids, country: options.country, refresh: options.service.refresh)
        }
        report(result, service: options.service, console: console)
        let found = Set(result.tracks.map(\.trackID))
        let missing = options.ids.filter { !found.contains($0) }
        if options.service.json {
            console.out(
                try encode(
                    LookupReport(
                        ids: options.ids, country: options.country, cached: result.fromCache, ageSeconds: result.age,
                        count: result.tracks.count, tracks: result.tracks, missing: missing,
                        notices: result.notices)))
        }
        guard !result.tracks.isEmpty else {
            if let playlist = options.playlist {
                throw CatalogError(
                    .httpStatus, "The playlist \(playlist) has no songs in the \(options.country) store.")
            }
            throw CatalogError(
                .httpStatus,
                "No songs with ID\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")) in the "
                    + "\(options.country) store; check the IDs or --country.")
        }
        if !missing.isEmpty && !options.service.json {
            console.err("Note: not found in the \(options.country) store: \(missing.joined(separator: ", ")).")
        }
        if !options.service.json {
            console.out(
                CatalogTable.render(result.tracks) + "\n\n"
                    + footer(count: result.tracks.count, noun: "song", result: result))
        }
    }

    static func charts(_ options: ChartsOptions, console: Console, clock: @escaping @Sendable () -> Double)
        async throws
    {
        let catalog = makeCatalog(options.service, console: console, clock: clock)
        let result = try await catalog.topSongs(
            country: options.country, limit: options.limit, refresh: options.service.refresh)
        report(result, service: options.service, console: console)
        if options.service.json {
            console.out(
                try encode(
                    ChartsReport(
                        country: options.country, limit: options.limit, cached: result.fromCache,
                        ageSeconds: result.age, count: result.tracks.count, tracks: result.tracks,
                        skipped: result.page.skipped, notices: result.notices)))
            return
        }
        guard !result.tracks.isEmpty else {
            console.out("The \(options.country) chart is empty right now.")
            return
        }
        console.out(
            "Top songs · \(options.country)\n\n" + CatalogTable.render(result.tracks) + "\n\n"
                + footer(count: result.tracks.count, noun: "song", result: result))
    }

    static func token(_ options: TokenOptions, console: Console, clock: @escaping @Sendable () -> Double) throws
    {
        let key = try ES256Key(contentsOfFile: options.keyPath)
        let claims = DeveloperTokenClaims(
            teamID: options.teamID, keyID: options.keyID, issuedAt: Int(clock()),
            lifetimeSeconds: options.lifetimeDays * 86_400)
        let token = try key.developerToken(claims)
        let expiry = Date(timeIntervalSince1970: Double(claims.expiresAt)).ISO8601Format()
        if options.json {
            console.out(
                try encode(
                    TokenReport(
                        token: token, teamID: claims.teamID, keyID: claims.keyID, issuedAt: claims.issuedAt,
                        expiresAt: claims.expiresAt, expires: expiry)))
        } else {
            console.out(token)
            console.err("Developer token for team \(claims.teamID), key \(claims.keyID), valid until \(expiry).")
        }
    }

    // MARK: Plumbing

    static func makeCatalog(
        _ service: CatalogServiceOptions, console: Console, clock: @escaping @Sendable () -> Double
    ) -> Catalog {
        var cache: CatalogCache?
        if service.useCache {
            do {
                cache = try CatalogCache(stateDirectory: service.stateDir)
            } catch {
                console.err("Warning: \(error.message) Continuing without the cache.")
            }
        }
        let configuration = CatalogConfiguration(
            endpoints: CatalogEndpoints(iTunesBaseURL: service.iTunesURL, appleMusicBaseURL: service.appleMusicURL),
            timeout: service.timeout, artworkSize: service.artworkSize)
        return Catalog(configuration: configuration, cache: cache, clock: clock)
    }

    static func credentials(_ auth: AppleMusicAuthOptions, clock: @escaping @Sendable () -> Double) throws(CatalogError)
        -> AppleMusicCredentials
    {
        if let token = auth.developerToken {
            return AppleMusicCredentials(developerToken: token, musicUserToken: auth.musicUserToken)
        }
        guard let keyPath = auth.keyPath, let team = auth.teamID, let keyID = auth.keyID else {
            throw CatalogError(
                .key, "No Apple Music developer token; pass --developer-token or --key, --team and --key-id.")
        }
        let key = try ES256Key(contentsOfFile: keyPath)
        // A short-lived token is enough for one command.
        let token = try key.developerToken(
            DeveloperTokenClaims(teamID: team, keyID: keyID, issuedAt: Int(clock()), lifetimeSeconds: 3600))
        return AppleMusicCredentials(developerToken: token, musicUserToken: auth.musicUserToken)
    }

    /// Notices always, the URL and cache use with `--verbose`.
    static func report(_ result: CatalogResult, service: CatalogServiceOptions, console: Console) {
        for notice in result.notices { console.err("Warning: \(notice)") }
        if service.verbose {
            let source = result.fromCache ? "cache (\(result.age) s old)" : "network"
            console.err("GET \(result.url) → \(source)")
            for skipped in result.page.skipped { console.err("left out \(skipped)") }
        }
    }

    static func footer(count: Int, noun: String, result: CatalogResult) -> String {
        var parts = ["\(count) \(noun)\(count == 1 ? "" : "s")"]
        if !result.page.skipped.isEmpty {
            parts.append("\(result.page.skipped.count) left out (not songs or incomplete; -v lists them)")
        }
        if result.fromCache { parts.append("from cache, \(result.age) s old (--refresh to ask again)") }
        return parts.joined(separator: " · ")
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

// MARK: JSON shapes (stable keys; missing values are null)

struct SearchReport: Encodable {
    var source: String
    var term: String
    var country: String
    var limit: Int
    var explicit: Bool
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    /// Only with --apple-music; the synthesized encoding leaves the key out when nil.
    var playlists: [CatalogPlaylist]?
    var skipped: [String]
    var notices: [String]
}

struct LookupReport: Encodable {
    var ids: [String]
    var country: String
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    var missing: [String]
    var notices: [String]
}

struct ChartsReport: Encodable {
    var country: String
    var limit: Int
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    var skipped: [String]
    var notices: [String]
}

struct TokenReport: Encodable {
    var token: String
    var teamID: String
    var keyID: String
    var issuedAt: Int
    var expiresAt: Int
    var expires: String
}
