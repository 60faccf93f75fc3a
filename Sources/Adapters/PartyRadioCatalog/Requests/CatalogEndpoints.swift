/// Builds every catalog URL from a base URL, so tests can point them all at a fixture server. Pure.
public struct CatalogEndpoints: Sendable, Equatable {
    public static let defaultITunesBaseURL = "https://itunes.apple.com"
    public static let defaultAppleMusicBaseURL = "https://api.music.apple.com"
    /// The Search API's own bounds for `limit`.
    public static let searchLimits = 1...200
    public static let defaultSearchLimit = 50
    /// The Apple Music API returns at most 25 items per type in one search page.
    public static let appleMusicLimits = 1...25
    /// The classic RSS feed serves at most 200 entries.
    public static let chartLimits = 1...200
    public static let defaultChartLimit = 25

    public var iTunesBaseURL: String
    public var appleMusicBaseURL: String

    public init(iTunesBaseURL: String = defaultITunesBaseURL, appleMusicBaseURL: String = defaultAppleMusicBaseURL) {
        self.iTunesBaseURL = Self.trimmed(iTunesBaseURL)
        self.appleMusicBaseURL = Self.trimmed(appleMusicBaseURL)
    }

    private static func trimmed(_ base: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// `GET /search?term=…&entity=song&limit=…&country=…[&explicit=No]`.
    public func search(term: String, country: String, limit: Int, allowExplicit: Bool) -> String {
        var items = [
            ("term", term), ("media", "music"), ("entity", "song"), ("limit", String(limit)),
            ("country", country),
        ]
        if !allowExplicit { items.append(("explicit", "No")) }
        return iTunesBaseURL + "/search?" + QueryEncoding.query(items)
    }

    /// `GET /lookup?id=1,2,3&country=…`: several IDs in one request.
    public func lookup(ids: [String], country: String) -> String {
        iTunesBaseURL + "/lookup?"
            + QueryEncoding.query([("id", ids.joined(separator: ",")), ("country", country)])
            .replacing("%2C", with: ",")
    }

    /// `GET /{cc}/rss/topsongs/limit=N/json`: the classic iTunes RSS top-songs feed.
    public func topSongs(country: String, limit: Int) -> String {
        iTunesBaseURL + "/\(QueryEncoding.encode(country))/rss/topsongs/limit=\(limit)/json"
    }

    /// `GET /v1/catalog/{storefront}/search?term=…&types=songs,playlists&limit=…`.
    public func appleMusicSearch(term: String, storefront: String, types: [String], limit: Int) -> String {
        appleMusicBaseURL + "/v1/catalog/\(QueryEncoding.encode(storefront))/search?"
            + QueryEncoding.query([("term", term), ("types", types.joined(separator: ",")), ("limit", String(limit))])
            .replacing("%2C", with: ",")
    }

    /// `GET /v1/catalog/{storefront}/songs?ids=…`.
    public func appleMusicSongs(ids: [String], storefront: String) -> String {
        appleMusicBaseURL + "/v1/catalog/\(QueryEncoding.encode(storefront))/songs?ids="
            + ids.map(QueryEncoding.encode).joined(separator: ",")
    }

    /// `GET /v1/catalog/{storefront}/playlists/{id}?include=tracks`.
    public func appleMusicPlaylist(id: String, storefront: String) -> String {
        appleMusicBaseURL + "/v1/catalog/\(QueryEncoding.encode(storefront))/playlists/\(QueryEncoding.encode(id))"
    }
}

/// Country (storefront) codes: validation and the default from the user's locale. Pure.
public enum Storefront {
    public static let fallback = "us"

    /// A two-letter ISO country code, lowercased; nil when `text` is not one.
    public static func normalized(_ text: String) -> String? {
        let lower = text.lowercased()
        guard lower.count == 2, lower.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) }) else { return nil }
        return lower
    }

    /// The region of the locale in `LC_ALL`, `LC_MESSAGES` or `LANG`, the first one set, as POSIX
    /// ranks them (`en_GB.UTF-8` → `gb`); "us" when that locale names no region (`C.UTF-8`).
    public static func fromLocale(_ environment: [String: String]) -> String {
        guard
            let value = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap({ environment[$0] })
                .first(where: { !$0.isEmpty })
        else { return fallback }
        let locale = value.split(separator: ".").first.map(String.init) ?? value
        let base = locale.split(separator: "@").first.map(String.init) ?? locale
        let parts = base.split(whereSeparator: { $0 == "_" || $0 == "-" })
        guard parts.count >= 2, let region = normalized(String(parts[1])) else { return fallback }
        return region
    }
}
