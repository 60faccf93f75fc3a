import Foundation
import PartyRadioCore
import Synchronization

/// Catalog artwork for the page, fetched by the DJ (so the page needs nothing from outside) and
/// kept in memory: at most ``capacity`` images, the oldest forgotten first; a track without
/// artwork is remembered as such for a while.
final class ArtworkCache: Sendable {
    static let capacity = 64
    static let missRetrySeconds = 60.0

    private struct Entries {
        var images: [String: (image: CatalogImage?, at: Date)] = [:]
        /// Oldest first.
        var order: [String] = []
    }

    private let catalog: any TrackCatalog
    private let entries = Mutex(Entries())

    init(catalog: any TrackCatalog) { self.catalog = catalog }

    /// The artwork of `id`, fetching it when not known (waits at most 8 s).
    func image(for id: String) -> CatalogImage? {
        let known: CatalogImage?? = entries.withLock { entries in
            guard let known = entries.images[id],
                known.image != nil || -known.at.timeIntervalSinceNow < Self.missRetrySeconds
            else { return nil }
            return .some(known.image)
        }
        if let known { return known }
        let catalog = self.catalog
        let image: CatalogImage?
        switch Blocking.run(seconds: 8, { try await catalog.artwork(for: id) }) {
        case .success(let found): image = found
        case .failure: image = nil
        }
        entries.withLock { entries in
            if entries.images[id] == nil { entries.order.append(id) }
            entries.images[id] = (image, Date())
            while entries.order.count > Self.capacity { entries.images[entries.order.removeFirst()] = nil }
        }
        return image
    }
}
