/// A decoder for one of Apple's catalog services. Pure.
///
/// Each decoder reads its service's document into a ``CatalogPage``; turning the response body
/// into that document, with errors that name the service, is the same for all of them and lives
/// in the extension.
public protocol CatalogDecoder {
    /// How error messages name the service, e.g. "The iTunes Search API".
    static var service: String { get }

    /// The page in an already parsed document; `artworkSize` is the width artwork URLs are sized to.
    static func decode(_ json: JSONValue, artworkSize: Int) throws(CatalogError) -> CatalogPage
}

extension CatalogDecoder {
    /// The page in a response body; an empty, HTML, cut-off or malformed body is a `.badResponse`
    /// error naming ``service`` (see ``ResponseBody``).
    public static func decode(
        _ body: [UInt8], contentType: String? = nil, artworkSize: Int = ArtworkURL.defaultSize
    ) throws(CatalogError) -> CatalogPage {
        let json = try ResponseBody.json(body, contentType: contentType, service: service)
        return try decode(json, artworkSize: artworkSize)
    }
}
