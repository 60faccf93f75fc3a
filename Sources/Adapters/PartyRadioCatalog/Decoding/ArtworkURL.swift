/// Rewrites Apple artwork URLs to another size. Pure.
///
/// The Search API hands out `…/source/100x100bb.jpg`; the same image exists at any size by
/// changing the `WxH` prefix of the last path component. Apple Music API URLs carry a
/// `{w}x{h}` template instead. Both are handled.
public enum ArtworkURL {
    /// The size the DJ shows: large enough for a phone screen, still quick to load.
    public static let defaultSize = 600

    /// `url` with its size set to `width`x`height`, or nil when the URL carries no size to rewrite.
    public static func resized(_ url: String, width: Int = defaultSize, height: Int? = nil) -> String? {
        let height = height ?? width
        guard width > 0, height > 0 else { return nil }
        let bytes = Array(url.utf8)
        if bytes.contains(UInt8(ascii: "{")) && (url.contains("{w}") || url.contains("{h}")) {
            return url.replacing("{w}", with: String(width)).replacing("{h}", with: String(height))
        }
        // Only the last path component is rewritten; a query string stays as it is.
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        guard let slash = bytes[..<queryStart].lastIndex(of: UInt8(ascii: "/")) else { return nil }
        func digits(from start: Int) -> Int {
            var end = start
            while end < queryStart, (0x30...0x39).contains(bytes[end]) { end += 1 }
            return end
        }
        let widthEnd = digits(from: slash + 1)
        guard widthEnd > slash + 1, widthEnd < queryStart, bytes[widthEnd] == UInt8(ascii: "x") else { return nil }
        let heightEnd = digits(from: widthEnd + 1)
        guard heightEnd > widthEnd + 1 else { return nil }
        return String(decoding: bytes[...slash], as: UTF8.self) + "\(width)x\(height)"
            + String(decoding: bytes[heightEnd...], as: UTF8.self)
    }

    /// `url` resized when possible, else unchanged: a URL we cannot resize is still a picture.
    public static func resizedOrOriginal(_ url: String, width: Int = defaultSize, height: Int? = nil) -> String {
        resized(url, width: width, height: height) ?? url
    }
}
