#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Settings for a ``Catalog``: where to send requests and how patiently.
public struct CatalogConfiguration: Sendable {
    public var endpoints: CatalogEndpoints
    /// Seconds for one whole request.
    public var timeout: Double
    /// Artwork edge in pixels (600 by default).
    public var artworkSize: Int
    /// Back-off for 403/429 rate limiting.
    public var retry: RetryPolicy
    /// Seconds a cached answer stays fresh.
    public var searchLifetime: Int
    public var lookupLifetime: Int
    public var chartLifetime: Int

    public init(
        endpoints: CatalogEndpoints = CatalogEndpoints(), timeout: Double = HTTPClient.defaultTimeout,
        artworkSize: Int = ArtworkURL.defaultSize, retry: RetryPolicy = RetryPolicy(),
        searchLifetime: Int = 3600, lookupLifetime: Int = 86_400, chartLifetime: Int = 3600
    ) {
        self.endpoints = endpoints
        self.timeout = timeout
        self.artworkSize = artworkSize
        self.retry = retry
        self.searchLifetime = searchLifetime
        self.lookupLifetime = lookupLifetime
        self.chartLifetime = chartLifetime
    }
}

/// Credentials for the Apple Music API.
public struct AppleMusicCredentials: Sendable {
    /// The developer token (an ES256 JWT, see ``ES256Key/developerToken(_:)``).
    public var developerToken: String
    /// A user's Music-User-Token, for personalised requests; optional.
    public var musicUserToken: String?

    public init(developerToken: String, musicUserToken: String? = nil) {
        self.developerToken = developerToken
        self.musicUserToken = musicUserToken
    }
}

/// A decoded answer and how it was obtained.
public struct CatalogResult: Sendable {
    public var page: CatalogPage
    /// True when it came from the on-disk cache rather than the network.
    public var fromCache: Bool
    /// Seconds since the cached answer was fetched (0 when fresh from the network).
    public var age: Int
    /// Things the user should know (cache recovered, stale answer served while offline).
    public var notices: [String]
    /// The URL asked (for `--verbose` and the JSON output).
    public var url: String

    public var tracks: [CatalogTrack] { page.tracks }
}

/// Apple's catalog: iTunes Search, Lookup, the top-songs feed and the Apple Music API, with an
/// optional on-disk cache. Every failure is a ``CatalogError`` whose message says what to do.
///
/// The DJ calls ``search(_:country:limit:allowExplicit:refresh:)`` and ``lookup(_:country:refresh:)``
/// and queues ``CatalogTrack/queueTrack`` of the results.
public final class Catalog: Sendable {
    public let configuration: CatalogConfiguration
    private let cache: CatalogCache?
    private let http: HTTPClient
    private let clock: @Sendable () -> Double
    private let sleep: @Sendable (Double) async -> Void

    /// - Parameters:
    ///   - cache: where answers are kept; nil for no caching.
    ///   - clock: Unix time in seconds (injected so tests can age the cache).
    ///   - sleep: how rate-limit back-off waits (injected so tests need not).
    public init(
        configuration: CatalogConfiguration = CatalogConfiguration(), cache: CatalogCache? = nil,
        http: HTTPClient = HTTPClient(), clock: @escaping @Sendable () -> Double = Catalog.systemTime,
        sleep: @escaping @Sendable (Double) async -> Void = Catalog.taskSleep
    ) {
        self.configuration = configuration
        self.cache = cache
        self.http = http
        self.clock = clock
        self.sleep = sleep
    }

    public static let systemTime: @Sendable () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    public static let taskSleep: @Sendable (Double) async -> Void = { seconds in
        try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
    }

    // MARK: The DJ's entry points

    /// Songs matching `term` (iTunes Search API, `entity=song`).
    /// - Parameters:
    ///   - country: two-letter storefront, e.g. "us".
    ///   - limit: 1–200.
    ///   - allowExplicit: false sends `explicit=No` (clean mode for a party).
    ///   - refresh: true skips the cache (the answer is still stored).
    public func search(
        _ term: String, country: String = Storefront.fallback, limit: Int = CatalogEndpoints.defaultSearchLimit,
        allowExplicit: Bool = true, refresh: Bool = false
    ) async throws -> [CatalogTrack] {
        try await searchResult(term, country: country, limit: limit, allowExplicit: allowExplicit, refresh: refresh)
            .tracks
    }

    /// The songs with these track IDs, in the order asked (unknown IDs are left out).
    public func lookup(_ ids: [String], country: String = Storefront.fallback, refresh: Bool = false) async throws
        -> [CatalogTrack]
    {
        try await lookupResult(ids, country: country, refresh: refresh).tracks
    }

    /// An image (a track's artwork) at `url`: only a 200 answer whose type is an image is taken.
    public func image(at url: String) async throws(CatalogError) -> (bytes: [UInt8], contentType: String) {
        let response = try await http.get(HTTPRequest(url: url))
        guard response.status == 200, let type = response.contentType, type.lowercased().hasPrefix("image/") else {
            throw Self.statusError(response, service: "The artwork server", baseFlag: "--itunes-url")
        }
        return (response.body, type)
    }

    // MARK: Detailed forms (the CLI shows cache state and notices)

    public func searchResult(
        _ term: String, country: String = Storefront.fallback, limit: Int = CatalogEndpoints.defaultSearchLimit,
        allowExplicit: Bool = true, refresh: Bool = false
    ) async throws(CatalogError) -> CatalogResult {
        let url = configuration.endpoints.search(
            term: term, country: country, limit: min(max(limit, 1), 200), allowExplicit: allowExplicit)
        return try await fetch(
            url, decoder: ITunesDecoder.self, lifetime: configuration.searchLifetime, refresh: refresh,
            baseFlag: "--itunes-url", forbiddenIsRateLimit: true
        )
    }

    public func lookupResult(_ ids: [String], country: String = Storefront.fallback, refresh: Bool = false)
        async throws(CatalogError) -> CatalogResult
    {
        var unique: [String] = []
        for id in ids where !unique.contains(id) { unique.append(id) }
        let url = configuration.endpoints.lookup(ids: unique, country: country)
        var result = try await fetch(
            url, decoder: ITunesDecoder.self, lifetime: configuration.lookupLifetime, refresh: refresh,
            baseFlag: "--itunes-url", forbiddenIsRateLimit: true
        )
        let rank = Dictionary(unique.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        result.page.tracks.sort { (rank[$0.trackID] ?? Int.max) < (rank[$1.trackID] ?? Int.max) }
        return result
    }

    /// The top songs of a country from the iTunes RSS feed.
    public func topSongs(
        country: String = Storefront.fallback, limit: Int = CatalogEndpoints.defaultChartLimit,
        refresh: Bool = false
    ) async throws(CatalogError) -> CatalogResult {
        let url = configuration.endpoints.topSongs(country: country, limit: min(max(limit, 1), 200))
        var result = try await fetch(
            url, decoder: ChartFeedDecoder.self, lifetime: configuration.chartLifetime, refresh: refresh,
            baseFlag: "--itunes-url", forbiddenIsRateLimit: true
        )
        if result.page.tracks.count > limit { result.page.tracks.removeLast(result.page.tracks.count - limit) }
        return result
    }

    /// Apple Music API catalog search (`/v1/catalog/{storefront}/search`) for songs and/or playlists.
    /// - Parameter allowExplicit: false drops songs rated explicit (the API has no clean-search
    ///   parameter, so this filters the answer).
    public func appleMusicSearch(
        _ term: String, storefront: String = Storefront.fallback, types: [String] = ["songs"], limit: Int = 25,
        allowExplicit: Bool = true, credentials: AppleMusicCredentials, refresh: Bool = false
    ) async throws(CatalogError) -> CatalogResult {
        let url = configuration.endpoints.appleMusicSearch(
            term: term, storefront: storefront, types: types, limit: min(max(limit, 1), 25))
        var result = try await appleMusic(url, credentials: credentials, refresh: refresh)
        if !allowExplicit {
            for track in result.page.tracks where track.isExplicit == true {
                result.page.skipped.append("song \(track.trackID): explicit (clean mode)")
            }
            result.page.tracks.removeAll { $0.isExplicit == true }
        }
        return result
    }

    /// Apple Music API songs by catalog ID (`/v1/catalog/{storefront}/songs?ids=`).
    public func appleMusicSongs(
        _ ids: [String], storefront: String = Storefront.fallback, credentials: AppleMusicCredentials,
        refresh: Bool = false
    ) async throws(CatalogError) -> CatalogResult {
        try await appleMusic(
            configuration.endpoints.appleMusicSongs(ids: ids, storefront: storefront), credentials: credentials,
            refresh: refresh)
    }

    /// The tracks of an Apple Music catalog playlist (`/v1/catalog/{storefront}/playlists/{id}`).
    public func appleMusicPlaylist(
        _ id: String, storefront: String = Storefront.fallback, credentials: AppleMusicCredentials,
        refresh: Bool = false
    ) async throws(CatalogError) -> CatalogResult {
        try await appleMusic(
            configuration.endpoints.appleMusicPlaylist(id: id, storefront: storefront), credentials: credentials,
            refresh: refresh)
    }

    private func appleMusic(_ url: String, credentials: AppleMusicCredentials, refresh: Bool) async throws(CatalogError)
        -> CatalogResult
    {
        var headers = [("Authorization", "Bearer " + credentials.developerToken)]
        if let user = credentials.musicUserToken { headers.append(("Music-User-Token", user)) }
        // A user token personalises answers: keep them apart in the cache.
        let key = credentials.musicUserToken == nil ? url : url + " #user"
        return try await fetch(
            url, cacheKey: key, headers: headers, decoder: AppleMusicDecoder.self,
            lifetime: configuration.searchLifetime, refresh: refresh, baseFlag: "--apple-music-url",
            forbiddenIsRateLimit: false
        )
    }

    // MARK: Fetching

    private func fetch<Decoder: CatalogDecoder>(
        _ url: String, cacheKey: String? = nil, headers: [(String, String)] = [], decoder: Decoder.Type,
        lifetime: Int, refresh: Bool, baseFlag: String, forbiddenIsRateLimit: Bool
    ) async throws(CatalogError) -> CatalogResult {
        let service = decoder.service
        func decode(_ body: [UInt8], _ contentType: String?) throws(CatalogError) -> CatalogPage {
            try decoder.decode(body, contentType: contentType, artworkSize: configuration.artworkSize)
        }
        let key = "GET " + (cacheKey ?? url)
        var notices: [String] = []
        var stale: (body: [UInt8], age: Int)?
        if let cache {
            let found = cache.lookup(key, now: Int(clock()))
            notices += cache.takeNotices()
            switch found {
            case .fresh(let body, let age) where !refresh:
                do throws(CatalogError) {
                    let page = try decode(body, nil)
                    return CatalogResult(page: page, fromCache: true, age: age, notices: notices, url: url)
                } catch {
                    cache.remove(key)
                    notices.append(
                        "A cached answer no longer decoded (\(error.message)); it was dropped and fetched again.")
                }
            case .fresh(let body, let age), .expired(let body, let age):
                stale = (body, age)
            case .miss:
                break
            }
        }

        var attempt = 0
        while true {
            let response: HTTPResponse
            do throws(CatalogError) {
                response = try await http.get(HTTPRequest(url: url, headers: headers, timeout: configuration.timeout))
            } catch {
                // Offline at the party: an expired answer beats none, said out loud. Not when the
                // user asked for a fresh one with --refresh.
                if !refresh, [.dns, .connect, .timeout].contains(error.code), let stale,
                    let page = try? decode(stale.body, nil)
                {
                    notices.append(
                        "\(error.message) Showing the answer cached \(Self.describeAge(stale.age)) ago instead.")
                    return CatalogResult(page: page, fromCache: true, age: stale.age, notices: notices, url: url)
                }
                throw error
            }
            let status = response.status
            if (200..<300).contains(status) {
                let page = try decode(response.body, response.contentType)
                if let cache {
                    cache.store(key, body: response.body, now: Int(clock()), lifetime: lifetime)
                    notices += cache.takeNotices()
                }
                return CatalogResult(page: page, fromCache: false, age: 0, notices: notices, url: url)
            }
            let retryAfter = response.headers["retry-after"].flatMap {
                RetryPolicy.retryAfterSeconds($0, now: clock())
            }
            let rateLimited = status == 429 || (status == 403 && forbiddenIsRateLimit)
            if rateLimited {
                if case .retry(let wait) = configuration.retry.decision(retryAfter: retryAfter, attempt: attempt) {
                    attempt += 1
                    await sleep(wait)
                    continue
                }
                let when =
                    retryAfter.map { "wait \(Self.describeAge(Int($0.rounded(.up)))) and try again" }
                    ?? "wait a minute and try again"
                let attempts = "\(attempt + 1) attempt\(attempt == 0 ? "" : "s")"
                throw CatalogError(
                    .rateLimited, "\(service) is limiting requests (HTTP \(status), \(attempts)); \(when).",
                    status: status, retryAfter: retryAfter)
            }
            throw Self.statusError(response, service: service, baseFlag: baseFlag)
        }
    }

    /// The error for a non-2xx, non-rate-limit answer, using the body's own explanation when it has one.
    static func statusError(_ response: HTTPResponse, service: String, baseFlag: String) -> CatalogError {
        let status = response.status
        var explanation = ""
        if let json = try? JSONParser.parse(response.body) {
            if let message = json["errorMessage"]?.string {
                explanation = ": \(message)"
            } else if let summary = AppleMusicDecoder.errorSummary(json) {
                explanation = ": \(summary)"
            }
        }
        switch status {
        case 401, 403:
            return CatalogError(
                .unauthorized,
                "\(service) refused the token (HTTP \(status)\(explanation)); make a new one with 'partyradio token' "
                    + "and check the team and key IDs.", status: status)
        case 404:
            return CatalogError(
                .httpStatus, "\(service) has nothing at \(response.effectiveURL) (HTTP 404); check \(baseFlag).",
                status: status)
        case 400..<500:
            return CatalogError(
                .httpStatus, "\(service) rejected the request (HTTP \(status))\(explanation); check the options given.",
                status: status)
        case 500..<600:
            return CatalogError(
                .httpStatus, "\(service) failed on its side (HTTP \(status)); try again later.", status: status)
        default:
            return CatalogError(
                .httpStatus,
                "\(service) answered HTTP \(status), which partyradio does not understand; check \(baseFlag).",
                status: status)
        }
    }

    /// "45 seconds", "3 minutes", "2 hours".
    static func describeAge(_ seconds: Int) -> String {
        switch seconds {
        case ..<120: "\(seconds) second\(seconds == 1 ? "" : "s")"
        case ..<7200: "\(seconds / 60) minutes"
        case ..<172_800: "\(seconds / 3600) hours"
        default: "\(seconds / 86_400) days"
        }
    }
}
