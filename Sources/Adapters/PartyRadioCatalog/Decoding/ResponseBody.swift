/// Turns a response body into JSON or into an error a user can act on. Pure.
///
/// Apple's edge sometimes answers with an HTML page (maintenance, captive portals, a wrong base
/// URL); a proxy may cut a body short. Each case gets its own sentence instead of "bad JSON".
public enum ResponseBody {
    /// The parsed JSON of `body`, or a `.badResponse` error naming `service` and what to do.
    public static func json(_ body: [UInt8], contentType: String?, service: String) throws(CatalogError) -> JSONValue {
        let firstByte = body.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) })
        guard let firstByte else {
            throw CatalogError(.badResponse, "\(service) sent an empty response; try again in a moment.")
        }
        let isHTML = firstByte == UInt8(ascii: "<") || (contentType?.lowercased().contains("html") ?? false)
        if isHTML && firstByte != UInt8(ascii: "{") && firstByte != UInt8(ascii: "[") {
            let title = htmlTitle(body).map { " ('\($0)')" } ?? ""
            throw CatalogError(
                .badResponse,
                "\(service) sent a web page\(title) instead of JSON; check the base URL, or try again later.")
        }
        do {
            var start = body.startIndex
            if body.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
            return try JSONParser.parse(body[start...])
        } catch {
            if error.isTruncation {
                throw CatalogError(
                    .badResponse, "\(service) sent a response that was cut off after \(body.count) bytes; try again.",
                    underlying: error)
            }
            throw CatalogError(
                .badResponse, "\(service) sent malformed JSON (\(error.description)); try again later.",
                underlying: error)
        }
    }

    /// The text of the first `<title>` element, trimmed and shortened, if there is one.
    static func htmlTitle(_ body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(8192), as: UTF8.self)
        let lower = text.lowercased()
        guard let open = lower.firstRange(of: "<title"),
            let close = lower[open.upperBound...].firstRange(of: "</title>"),
            let tagEnd = lower[open.upperBound..<close.lowerBound].firstIndex(of: ">")
        else { return nil }
        let startOffset = lower.distance(from: lower.startIndex, to: lower.index(after: tagEnd))
        let endOffset = lower.distance(from: lower.startIndex, to: close.lowerBound)
        let characters = Array(text)
        guard startOffset <= endOffset, endOffset <= characters.count else { return nil }
        let title = String(characters[startOffset..<endOffset]).split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        guard !title.isEmpty else { return nil }
        return title.count > 80 ? String(title.prefix(79)) + "…" : title
    }
}
