import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// Runs the catalog commands: `search`, `lookup` and `charts` (async libcurl transfers, waited
/// for here) and `token`. Each takes its parsed options and a ``CommandContext`` and returns the
/// exit code, as the node commands do.
enum CatalogCommands {
    /// Runs `body` from the CLI's synchronous entry and waits for it. A failure prints
    /// `Error: …` with the command's help hint and exits 1.
    static func run(_ name: String, _ context: CommandContext, _ body: @escaping @Sendable () async throws -> Void)
        -> Int32
    {
        let failure: String? = Blocking.run {
            do {
                try await body()
                return nil
            } catch { return message(error) }
        }
        return finish(name, failure, console: context.console)
    }

    /// The exit code for a run that ended with `failure` (nil: success), printing the failure.
    static func finish(_ name: String, _ failure: String?, console: Console) -> Int32 {
        guard let failure else { return ExitCode.success.rawValue }
        console.error(failure, hint: "See 'partyradio \(name) --help'.")
        return ExitCode.failure.rawValue
    }

    /// What to tell the user: a catalog error's own sentence, else the error's description.
    static func message(_ error: any Error) -> String {
        (error as? CatalogError)?.message ?? "\(error)"
    }

    // MARK: Plumbing

    static func makeCatalog(_ service: CatalogServiceOptions, common: CommonOptions, context: CommandContext)
        -> Catalog
    {
        var cache: CatalogCache?
        if service.useCache {
            do {
                cache = try CatalogCache(
                    stateDirectory: StateDirectory.resolve(common.stateDir, environment: context.environment))
            } catch {
                context.console.err("Warning: \(error.message) Continuing without the cache.")
            }
        }
        let configuration = CatalogConfiguration(
            endpoints: CatalogEndpoints(iTunesBaseURL: service.iTunesURL, appleMusicBaseURL: service.appleMusicURL),
            timeout: service.timeout, artworkSize: service.artworkSize)
        return Catalog(configuration: configuration, cache: cache, clock: context.clock)
    }

    static func credentials(_ auth: AppleMusicAuthOptions, clock: @Sendable () -> Double) throws(CatalogError)
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

    /// Notices go to the user as warnings; the URL asked, cache use and left-out items to the
    /// log (`-v`).
    static func report(_ result: CatalogResult, console: Console) {
        for notice in result.notices { console.err("Warning: \(notice)") }
        Log.debug(.catalog, "GET \(result.url) → " + (result.fromCache ? "cache (\(result.age) s old)" : "network"))
        for skipped in result.page.skipped { Log.debug(.catalog, "left out \(skipped)") }
    }

    static func footer(count: Int, noun: String, result: CatalogResult) -> String {
        var parts = ["\(count) \(noun)\(count == 1 ? "" : "s")"]
        if !result.page.skipped.isEmpty {
            parts.append("\(result.page.skipped.count) left out (not songs or incomplete; -v lists them)")
        }
        if result.fromCache { parts.append("from cache, \(result.age) s old (--refresh to ask again)") }
        return parts.joined(separator: " · ")
    }
}
