import Foundation
import Glibc
import PartyRadioCore
import Testing

@testable import PartyRadioNode

/// A live player's artwork as the DJ serves it (docs/LIVE.md, "Now playing from the player"): a
/// regular file that is an image, read once per track; never a pipe, a device, a large file or a
/// file that is no image; the page state names it only for the track it belongs to.
@Suite struct LiveArtworkTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("cover".utf8)

    func folder() throws -> String {
        let path = NSTemporaryDirectory() + "partyradio-art-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("an image file is served with its type; a key, a pipe, a device or a file past 4 MiB is not")
    func onlyImages() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: "\(dir)/a b.png", contents: Data(Self.png)))
        let image = LiveArtwork.load("file://\(dir)/a%20b.png")
        #expect(image?.bytes == Self.png && image?.contentType == "image/png")
        #expect(FileManager.default.createFile(atPath: "\(dir)/station.key", contents: Data(repeating: 7, count: 64)))
        #expect(LiveArtwork.load("file://\(dir)/station.key") == nil)
        // A pipe would block the reader for ever: it is not read at all.
        #expect(mkfifo("\(dir)/fifo", 0o600) == 0)
        #expect(LiveArtwork.load("file://\(dir)/fifo") == nil)
        #expect(LiveArtwork.load("file:///dev/zero") == nil)
        // A PNG's signature at the head of a file too large: not read.
        #expect(FileManager.default.createFile(atPath: "\(dir)/huge.png", contents: Data(Self.png)))
        #expect(truncate("\(dir)/huge.png", off_t(ArtworkImage.maxBytes + 1)) == 0)
        #expect(LiveArtwork.load("file://\(dir)/huge.png") == nil)
        #expect(LiveArtwork.load("file://\(dir)/missing.png") == nil)
        #expect(LiveArtwork.load("javascript:alert(1)") == nil)
    }

    @Test("the artwork of the track playing only, read once per track; the page state names it for that track")
    func followsThePlayersTrack() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/cover.png"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.png)))
        let artwork = LiveArtwork()
        artwork.follow(id: "live:1", url: "file://\(path)")
        #expect(artwork.image(for: "live:2") == nil, "another track's")
        #expect(artwork.image(for: "live:1")?.bytes == Self.png)
        // Kept while the track plays: the file gone, still served.
        try FileManager.default.removeItem(atPath: path)
        #expect(artwork.image(for: "live:1")?.bytes == Self.png)
        artwork.follow(id: "live:2", url: nil)
        #expect(artwork.image(for: "live:1") == nil && artwork.image(for: "live:2") == nil)

        let live = Track(id: "live:1", title: "Song", artist: "", album: "", durationMs: 0, source: "live:")
        #expect(WebState.artworkPath(of: live, catalog: true, live: "live:1") == .string("/art/live:1"))
        #expect(WebState.artworkPath(of: live, catalog: true, live: "live:2") == .null)
        #expect(WebState.artworkPath(of: live, catalog: true, live: nil) == .null)
        let catalog = Track(id: "1440857781", title: "S", artist: "", album: "", durationMs: 0, source: "https://x/y")
        #expect(WebState.artworkPath(of: catalog, catalog: true, live: nil) == .string("/art/1440857781"))
        #expect(WebState.artworkPath(of: catalog, catalog: false, live: nil) == .null)
    }
}
