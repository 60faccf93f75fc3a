import Foundation
import PartyRadioCore
import PartyRadioCurl
import Synchronization

/// A live station's now-playing artwork as its followed player names it (`mpris:artUrl`), for the
/// page and the listeners' MPRIS (`GET /art/live:…`, docs/LIVE.md): read from the DJ's own disk or
/// fetched over http(s) once per track and kept while that track plays. Only an image is served
/// (``ArtworkImage``): a player that names a key file or a device gets nothing out of it.
final class LiveArtwork: Sendable {
    private struct Current {
        var id: String?
        var url: String?
        /// The image once looked for (nil inside: looked for, none).
        var image: CatalogImage??
    }

    private let current = Mutex(Current())

    /// The followed player's track is now `id` (its station track ID) with artwork at `url` (nil:
    /// no player, or no artwork).
    func follow(id: String?, url: String?) {
        current.withLock { current in
            guard current.id != id || current.url != url else { return }
            current = Current(id: id, url: url)
        }
    }

    /// What the DJ's followed player plays now (on the DJ's thread, as its page state changes).
    func follow(_ machine: DJMachine) {
        let track = machine.livePlayer?.track
        follow(id: track?.stationTrack.id, url: track?.artURL)
    }

    /// The artwork of the live track `id`, while it is the one playing and its URL names an image.
    func image(for id: String) -> CatalogImage? {
        let (url, known) = current.withLock { $0.id == id ? ($0.url, $0.image) : (nil, nil) }
        guard let url else { return nil }
        if let known { return known }
        let image = Self.load(url)
        current.withLock { current in
            if current.id == id && current.url == url { current.image = .some(image) }
        }
        return image
    }

    /// The image at `url`: a regular file of at most ``ArtworkImage/maxBytes`` (never a pipe or a
    /// device, which could block or never end), or an http(s) answer as large at most, 5 s.
    static func load(_ url: String) -> CatalogImage? {
        switch ArtworkImage.location(of: url) {
        case .file(let path)?:
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int, size <= ArtworkImage.maxBytes,
                let handle = FileHandle(forReadingAtPath: path)
            else { return nil }
            defer { try? handle.close() }
            guard let data = try? handle.read(upToCount: ArtworkImage.maxBytes + 1),
                data.count <= ArtworkImage.maxBytes
            else { return nil }
            return image(Array(data))
        case .web(let url)?:
            guard let handle = try? CurlHandle() else { return nil }
            let collector = CurlBodyCollector(limit: ArtworkImage.maxBytes)
            let outcome = handle.perform(CurlRequest(url: url, timeout: 5, connectTimeout: 3), into: collector)
            guard outcome.failure == nil, outcome.status == 200 else { return nil }
            return image(Array(collector.body))
        case nil:
            return nil
        }
    }

    private static func image(_ bytes: [UInt8]) -> CatalogImage? {
        ArtworkImage.contentType(of: bytes).map { CatalogImage(bytes: bytes, contentType: $0) }
    }
}
