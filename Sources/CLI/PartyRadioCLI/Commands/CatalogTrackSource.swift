import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// The DJ's way into the catalog: iTunes search and lookup, playable tracks only, each with
/// its preview URL as the source every node plays.
struct CatalogTrackSource: TrackCatalog {
    let catalog: Catalog
    var country: String
    var allowExplicit: Bool

    /// iTunes previews are 30 seconds long whatever the song's length (`trackTimeMillis`), and
    /// the station must move on when the preview ends, not minutes later.
    static let previewLengthMs: UInt32 = 30_000

    func search(_ term: String) async throws -> [Track] {
        try await catalog.search(term, country: country, limit: 25, allowExplicit: allowExplicit)
            .compactMap(Self.queueable)
    }

    func lookup(_ ids: [String]) async throws -> [Track] {
        try await catalog.lookup(ids, country: country).compactMap(Self.queueable)
    }

    /// The track's artwork at 600x600, fetched through the catalog's HTTP client (only an image
    /// answer is taken).
    func artwork(for id: String) async throws -> CatalogImage? {
        guard let url = try await catalog.lookup([id], country: country).first(where: { $0.trackID == id })?.artworkURL
        else { return nil }
        let image = try await catalog.image(at: url)
        return CatalogImage(bytes: image.bytes, contentType: image.contentType)
    }

    static func queueable(_ track: CatalogTrack) -> Track? {
        guard var queued = track.queueTrack else { return nil }
        queued.durationMs = queued.durationMs == 0 ? previewLengthMs : min(queued.durationMs, previewLengthMs)
        return queued
    }
}
