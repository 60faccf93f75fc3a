import PartyRadioCore

/// A song from Apple's catalog, as the DJ needs it to show and queue it.
///
/// Fields Apple sometimes leaves out are optional rather than invented, so callers can mark
/// them ("no preview") instead of playing an empty URL.
public struct CatalogTrack: Hashable, Sendable, Codable {
    /// The store's track ID as a string, whether Apple sent a number or a string.
    public var trackID: String
    public var title: String
    /// The artist name; "Unknown Artist" when Apple left it out.
    public var artist: String
    /// The album (collection) name, nil when missing.
    public var album: String?
    public var durationMs: Int?
    /// The 30-second preview every node plays; nil when the store has none (the track cannot be
    /// queued), or when what it gave is not a fetchable URL (``MediaSource/isFetchable(_:)``): the
    /// DJ's player and every listener's would open it (`file:///…`, `av://lavfi:…`).
    public var previewURL: String?
    /// Artwork rewritten to the requested size (600x600 by default); nil when missing.
    public var artworkURL: String?
    /// True when the store marks the track explicit; nil when it does not say.
    public var isExplicit: Bool?

    public init(
        trackID: String, title: String, artist: String, album: String? = nil, durationMs: Int? = nil,
        previewURL: String? = nil, artworkURL: String? = nil, isExplicit: Bool? = nil
    ) {
        self.trackID = trackID
        self.title = title
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
        self.previewURL = previewURL.flatMap { MediaSource.isFetchable($0) ? $0 : nil }
        self.artworkURL = artworkURL
        self.isExplicit = isExplicit
    }

    /// Whether the track has a preview to play, i.e. whether it can join the queue.
    public var isPlayable: Bool { previewURL != nil }

    /// The queue entry for this track, its preview URL as the source; nil without a preview.
    public var queueTrack: Track? {
        guard let previewURL else { return nil }
        let duration = UInt32(clamping: max(0, durationMs ?? 0))
        return Track(
            id: trackID, title: title, artist: artist, album: album ?? "", durationMs: duration, source: previewURL)
    }

    enum CodingKeys: String, CodingKey {
        case trackID, title, artist, album, durationMs, previewURL, artworkURL
        case isExplicit = "explicit"
    }

    /// Missing values are written as `null`, so scripts see every key in every object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(trackID, forKey: .trackID)
        try container.encode(title, forKey: .title)
        try container.encode(artist, forKey: .artist)
        try container.encode(album, forKey: .album)
        try container.encode(durationMs, forKey: .durationMs)
        try container.encode(previewURL, forKey: .previewURL)
        try container.encode(artworkURL, forKey: .artworkURL)
        try container.encode(isExplicit, forKey: .isExplicit)
    }
}

/// A playlist from an Apple Music search (`--types playlists`).
public struct CatalogPlaylist: Hashable, Sendable, Codable {
    public var playlistID: String
    public var name: String
    public var curator: String?
    public var artworkURL: String?
    public var url: String?

    public init(playlistID: String, name: String, curator: String? = nil, artworkURL: String? = nil, url: String? = nil)
    {
        self.playlistID = playlistID
        self.name = name
        self.curator = curator
        self.artworkURL = artworkURL
        self.url = url
    }

    enum CodingKeys: String, CodingKey { case playlistID, name, curator, artworkURL, url }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(playlistID, forKey: .playlistID)
        try container.encode(name, forKey: .name)
        try container.encode(curator, forKey: .curator)
        try container.encode(artworkURL, forKey: .artworkURL)
        try container.encode(url, forKey: .url)
    }
}

/// What a decoder made of one response: the usable tracks and what it had to leave out, and why.
public struct CatalogPage: Sendable, Equatable {
    public var tracks: [CatalogTrack]
    public var playlists: [CatalogPlaylist]
    /// One line per result that was left out (not a song, no ID, no title).
    public var skipped: [String]
    /// The count the response claimed (`resultCount`), when it gave one; it may disagree with `tracks`.
    public var declaredCount: Int?

    public init(
        tracks: [CatalogTrack] = [], playlists: [CatalogPlaylist] = [], skipped: [String] = [],
        declaredCount: Int? = nil
    ) {
        self.tracks = tracks
        self.playlists = playlists
        self.skipped = skipped
        self.declaredCount = declaredCount
    }
}
