/// What a live player's artwork may be, before the DJ serves it to guests (docs/LIVE.md, "Now
/// playing from the player"): the player names a URL on the DJ's own disk or the web, and only an
/// image of a kind the page shows, known by its first bytes (never by its name or the server's
/// word), up to ``maxBytes``, is served. A `file://` URL that names anything else (a key, a
/// database) is served as nothing.
public enum ArtworkImage {
    /// The largest artwork served (a cover is tens to hundreds of kilobytes).
    public static let maxBytes = 4 << 20

    /// The content type of an image of a kind the page shows (PNG, JPEG, GIF, WebP), known by its
    /// first bytes; nil for anything else.
    public static func contentType(of bytes: some Collection<UInt8>) -> String? {
        let head = Array(bytes.prefix(12))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        return nil
    }

    /// Where an artwork URL points: a file on this machine (`file:///path`, percent-decoded; only
    /// the local host), a web URL (`http`, `https`), or nil for anything else.
    public enum Location: Equatable, Sendable {
        case file(path: String)
        case web(url: String)
    }

    public static func location(of url: String) -> Location? {
        if url.hasPrefix("https://") || url.hasPrefix("http://") { return .web(url: url) }
        for prefix in ["file://localhost/", "file:///"] where url.hasPrefix(prefix) {
            guard let path = WebForm.decode(Array(("/" + url.dropFirst(prefix.count)).utf8)[...], plusIsSpace: false),
                !path.contains("\0")
            else {
                return nil
            }
            return .file(path: path)
        }
        return nil
    }
}
