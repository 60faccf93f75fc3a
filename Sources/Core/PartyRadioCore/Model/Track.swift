/// A track in the station's queue: what a listener needs to show and play it.
public struct Track: Hashable, Sendable, Codable {
    /// Catalog track ID, or `local:<hash>` for a file from the DJ's library.
    public var id: String
    public var title: String
    public var artist: String
    public var album: String
    public var durationMs: UInt32
    /// What every node plays: a catalog preview URL, or the DJ's HTTP URL for a local file.
    public var source: String

    public init(id: String, title: String, artist: String, album: String, durationMs: UInt32, source: String) {
        self.id = id
        self.title = title
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
        self.source = source
    }
}

/// A listener's vote on the current track.
public enum VoteChoice: UInt8, Sendable, Codable, CaseIterable {
    case clear = 0
    case up = 1
    case down = 2

    public var name: String {
        switch self {
        case .clear: "clear"
        case .up: "up"
        case .down: "down"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}
