/// A music file found in the DJ's library, with the tags read from it.
public struct LibraryTrack: Hashable, Sendable, Codable {
    /// `local:` and 16 hex digits of a hash of path, size and modification time: stable across
    /// runs while the file is unchanged, different when it is replaced.
    public var id: String
    /// Absolute file path.
    public var path: String
    public var title: String
    public var artist: String
    public var album: String
    public var durationMs: UInt32

    public init(id: String, path: String, title: String, artist: String, album: String, durationMs: UInt32) {
        self.id = id
        self.path = path
        self.title = title
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
    }

    /// The stable ID for a file. FNV-1a (64-bit): Swift's `Hasher` is seeded per process.
    public static func stableID(path: String, size: Int64, modifiedNs: Int64) -> String {
        var hash = FNV1a64()
        hash.combine(path.utf8)
        hash.combine([0])
        hash.combine(withUnsafeBytes(of: size.littleEndian) { Array($0) })
        hash.combine(withUnsafeBytes(of: modifiedNs.littleEndian) { Array($0) })
        return "local:" + Hex.encode(hash.value)
    }

    /// The queue entry for this file, played from `source` (the DJ's HTTP URL for it).
    public func track(source: String) -> Track {
        Track(id: id, title: title, artist: artist, album: album, durationMs: durationMs, source: source)
    }
}
