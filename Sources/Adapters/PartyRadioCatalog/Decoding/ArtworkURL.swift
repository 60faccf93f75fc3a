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
        if url.contains("{w}") || url.contains("{h}") {
            return url.replacing("{w}", with: String(width)).replacing("{h}", with: String(height))
        }
        // Only the last path component is rewritten; a query string stays as it is.
        let queryStart = url.firstIndex(of: "?") ?? url.endIndex
        let path = url[..<queryStart]
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let component = path[path.index(after: slash)...]
        var rest = Substring(component)
        let widthDigits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !widthDigits.isEmpty else { return nil }
        rest = rest.dropFirst(widthDigits.count)
        guard rest.first == "x" else { return nil }
        rest = rest.dropFirst()
        let heightDigits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !heightDigits.isEmpty else { return nil }
        rest = rest.dropFirst(heightDigits.count)
        return String(path[...slash]) + "\(width)x\(height)" + rest + url[queryStart...]
    }

    /// `url` resized when possible, else unchanged: a URL we cannot resize is still a picture.
    public static func resizedOrOriginal(_ url: String, width: Int = defaultSize, height: Int? = nil) -> String {
        resized(url, width: width, height: height) ?? url
    }
}
