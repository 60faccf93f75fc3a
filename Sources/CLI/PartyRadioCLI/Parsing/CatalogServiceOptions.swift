import PartyRadioCatalog

/// Where `search`, `lookup` and `charts` send requests, how they use the cache, and how they print.
public struct CatalogServiceOptions: Equatable, Sendable {
    /// `--itunes-url`, else ``EnvironmentKnobs/iTunesURL``.
    public var iTunesURL: String
    /// `--apple-music-url`, else ``EnvironmentKnobs/appleMusicURL``.
    public var appleMusicURL: String
    /// `--timeout SECONDS` for one request.
    public var timeout: Double = HTTPClient.defaultTimeout
    /// `--refresh`: ask the network even when the cache has a fresh answer.
    public var refresh = false
    /// `--no-cache`: neither read nor write the cache.
    public var useCache = true
    /// `--json`: machine-readable output.
    public var json = false
    /// `--artwork-size N`: artwork URLs rewritten to N×N.
    public var artworkSize = ArtworkURL.defaultSize

    /// The defaults, with the base URLs of the environment's `knobs`.
    public init(knobs: EnvironmentKnobs) {
        iTunesURL = knobs.iTunesURL
        appleMusicURL = knobs.appleMusicURL
    }

    static let help: [(String, String)] = [
        ("--json", "Print machine-readable JSON."),
        ("--refresh", "Ask the network even if the cache has a fresh answer."),
        ("--no-cache", "Neither read nor write the on-disk cache."),
        ("--itunes-url <url>", "iTunes base URL (default: $PARTYRADIO_ITUNES_URL or https://itunes.apple.com)."),
        ("--timeout <seconds>", "Give up on a request after this long (default: 15)."),
        ("--artwork-size <n>", "Artwork URLs rewritten to n×n pixels (default: 600)."),
    ]

    /// Consumes `option` if it is one of these; false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--itunes-url": iTunesURL = try scanner.url(for: option)
        case "--apple-music-url": appleMusicURL = try scanner.url(for: option)
        case "--timeout": timeout = try scanner.seconds(for: option, in: 0.1...600)
        case "--refresh": refresh = true
        case "--no-cache": useCache = false
        case "--json": json = true
        case "--artwork-size": artworkSize = try scanner.integer(for: option, in: 30...5000)
        default: return false
        }
        return true
    }
}
