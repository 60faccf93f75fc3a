import PartyRadioCore

/// Where the DJ finds catalog tracks to queue (`search TERM`, `add ID` on its controls).
/// The CLI implements it over the iTunes/Apple Music catalog; the node only needs tracks.
public protocol TrackCatalog: Sendable {
    /// Playable tracks (with a preview to play) matching `term`, best first.
    func search(_ term: String) async throws -> [Track]
    /// The playable tracks with these IDs, in the order asked.
    func lookup(_ ids: [String]) async throws -> [Track]
    /// The artwork of catalog track `id` (an image and its content type), nil when it has none.
    func artwork(for id: String) async throws -> CatalogImage?
}

extension TrackCatalog {
    public func artwork(for id: String) async throws -> CatalogImage? { nil }
}

/// An image from the catalog (a track's artwork), as the web page serves it.
public struct CatalogImage: Sendable {
    public var bytes: [UInt8]
    public var contentType: String

    public init(bytes: [UInt8], contentType: String) {
        self.bytes = bytes
        self.contentType = contentType
    }
}
