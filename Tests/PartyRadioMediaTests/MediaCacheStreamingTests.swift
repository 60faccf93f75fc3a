import CatalogTestSupport
import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioMedia

/// Real libmpv (`ao=null`) playing a track through the player's own protocol while the media cache
/// is still fetching it from the catalog fixture server on loopback, which serves its preview WAVs
/// (30 s, 22.05 kHz mono: 44.1 KB a second of audio) slowly on purpose.
@Suite("Media cache: playing a track while it downloads (libcurl, libmpv, loopback)", .serialized)
final class MediaCacheStreamingTests {
    let directory: TemporaryDirectory
    let clock = RealtimeClock()
    /// 64 KB chunks, so that the file arrives in order at the fixture's slow pace.
    static let plan = RangeFetchPlan.Configuration(chunkBytes: 64 << 10)

    private var servers: [FixtureServer] = []

    init() throws { directory = try TemporaryDirectory() }

    deinit {
        for server in servers { server.stop() }
        directory.cleanup()
    }

    func player(reading cache: MediaCache) throws -> Player {
        try Player(options: Player.Options(audio: .none), clock: clock) { name in cache.reader(named: name) }
    }

    /// A preview served by the fixture with `options`, being fetched by a new cache once its first
    /// bytes are there: the cache, the preview's URL and a reader of it.
    func download(_ name: String, _ options: [String]) throws -> (MediaCache, String, MediaCache.Reader) {
        let url = try server(options).baseURL + "/itunes-assets/AudioPreview125/\(name).m4a"
        let cache = try MediaCache(directory: URL(fileURLWithPath: directory.file(name)), planConfiguration: Self.plan)
        cache.request(url, now: true)
        #expect(waitUntil(30) { cache.isReadable(url) }, "the first bytes never came")
        return (cache, url, try #require(cache.reader(named: MediaCache.streamName(for: url))))
    }

    /// Starts the fixture server with `options` (it stops with the test).
    func server(_ options: [String]) throws -> FixtureServer {
        let server = try FixtureServer(options: ["--previews", "127.0.0.1"] + options)
        servers.append(server)
        return server
    }

    @Test("mpv plays from the growing file past what was there at the start, and seeks ahead into what is not yet")
    func playsWhileItDownloads() throws {
        // Six connections at 30 KB/s: the whole 1.3 MB takes about 7 s.
        let (cache, url, reader) = try download("growing", ["--preview-rate", "30000"])
        let there = reader.availableFromStart
        let player = try player(reading: cache)
        defer { player.shutdown() }
        try player.load(Player.streamURL(named: MediaCache.streamName(for: url)))
        // 2 s of audio is 88 KB: more than was there when it started, while the rest still downloads.
        #expect(waitUntil(10) { (player.position()?.positionNs ?? 0) >= 2_000_000_000 }, "never reached 2 s")
        #expect(there < 88_200, "\(there) bytes were there at the start")
        #expect(cache.status(of: url) == .fetching, "the test wants a file still downloading")
        #expect(player.durationNs.map { abs($0 - 30_000_000_000) < 100_000_000 } == true, "size known: 30 s")
        // 25 s in is past what has come: the read waits for it (fetched next), then it plays on.
        try player.seek(toNs: 25_000_000_000)
        #expect(waitUntil(15) { (player.position()?.positionNs ?? 0) >= 25_500_000_000 }, "the seek never played")
        #expect(waitUntil(15) { if case .ready = cache.status(of: url) { true } else { false } })
    }

    @Test("A download that fails part way makes the reads fail: mpv ends the file with an error, nothing hangs")
    func failedDownloadFailsTheRead() async throws {
        // Ranges from 128 KB on answer, after 2 s, for a file one byte longer: the download fails.
        let (cache, url, reader) = try download("broken", ["--preview-rate", "30000", "--preview-break-at", "131072"])
        let player = try player(reading: cache)
        defer { player.shutdown() }
        let ended = Locked<PlayerEvent.EndReason?>(nil)
        let events = player.events
        let watcher = Task {
            for await event in events {
                if case .endOfFile(let reason) = event {
                    ended.update { $0 = reason }
                    return
                }
            }
        }
        defer { watcher.cancel() }
        try player.load(Player.streamURL(named: MediaCache.streamName(for: url)))
        #expect(waitUntil(15) { ended.value != nil }, "mpv never ended the file")
        if case .error(let message)? = ended.value {
            #expect(message.contains("changed size"), "\(message)")
        } else {
            Issue.record("the file ended without an error: \(String(describing: ended.value))")
        }
        // mpv can see the failed read before the cache's own thread has filed the download as failed.
        _ = waitUntil(15) {
            if case .failed = cache.status(of: url) { return true }
            return false
        }
        guard case .failed(let reason) = cache.status(of: url) else {
            Issue.record("the download did not fail: \(cache.status(of: url))")
            return
        }
        #expect(reason.contains("changed size"))
        // A reader opened before still reads what was written, and fails (at once) past it.
        var buffer = [UInt8](repeating: 0, count: 4096)
        let start = buffer.withUnsafeMutableBytes { reader.read(into: $0, at: 0) }
        #expect(start == .bytes(4096))
        let header = String(decoding: buffer[0..<4], as: UTF8.self)
        #expect(header == "RIFF", "the file's own bytes, not zeros")
        let past = buffer.withUnsafeMutableBytes { reader.read(into: $0, at: reader.size - 100) }
        #expect(past == .failed("the file changed size during the download (1323044 then 1323045 bytes)"))
        let end = buffer.withUnsafeMutableBytes { reader.read(into: $0, at: reader.size) }
        #expect(end == .end)
    }

    @Test("A cancelled reader stops waiting for bytes that have not come")
    func cancelUnblocks() throws {
        let (_, _, reader) = try download("cancel", ["--preview-rate", "20000"])
        let result = Locked<ByteSourceRead?>(nil)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16)
            let read = buffer.withUnsafeMutableBytes { reader.read(into: $0, at: reader.size - 16) }
            result.update { $0 = read }
        }
        thread.start()
        usleep(300_000)
        #expect(result.value == nil, "the end of the file is not there yet: the read waits")
        reader.cancel()
        #expect(waitUntil(2) { result.value != nil })
        #expect(result.value == .cancelled)
    }
}
