import Foundation
import PartyRadioCore

/// Catalog artwork for the page, fetched by the DJ (so the page needs nothing from outside) and
/// kept in memory: at most ``capacity`` images, the oldest forgotten first; a track without
/// artwork is remembered as such for a while.
final class ArtworkCache: @unchecked Sendable {  // `entries` and `order` are guarded by `lock`
    static let capacity = 64
    static let missRetrySeconds = 60.0

    private let catalog: any TrackCatalog
    private let lock = NSLock()
    private var entries: [String: (image: CatalogImage?, at: Date)] = [:]
    private var order: [String] = []

    init(catalog: any TrackCatalog) { self.catalog = catalog }

    /// The artwork of `id`, fetching it when not known (waits at most 8 s).
    func image(for id: String) -> CatalogImage? {
        lock.lock()
        if let known = entries[id], known.image != nil || -known.at.timeIntervalSinceNow < Self.missRetrySeconds {
            lock.unlock()
            return known.image
        }
        lock.unlock()
        let catalog = self.catalog
        let image: CatalogImage?
        switch WebSite.await(seconds: 8, { try await catalog.artwork(for: id) }) {
        case .success(let found): image = found
        case .failure: image = nil
        }
        lock.lock()
        defer { lock.unlock() }
        if entries[id] == nil { order.append(id) }
        entries[id] = (image, Date())
        while order.count > Self.capacity { entries[order.removeFirst()] = nil }
        return image
    }
}
