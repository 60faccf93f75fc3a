import Foundation
import PartyRadioCore
import Testing

/// SIGHUP (what `systemctl reload partyradio-dj` sends) makes the DJ scan its library again and
/// queue what is new, and a listener hears about the longer queue.
@Suite(
    "Library reload on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct LibraryReloadLANTests {
    static func writeTrack(_ title: String, into folder: String) throws {
        let samples = (0..<(8000 * 4)).map { Int16(sin(Double($0) * 0.05) * 8000) }
        let bytes = WAVWriter.pcm16(
            samples: samples, sampleRate: 8000, info: WAVWriter.Info(title: title, artist: "Band"))
        try Data(bytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(title).wav"))
    }

    @Test("SIGHUP queues the music new in --library; the DJ says so and the listener sees the queue grow")
    func reload() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let library = lan.stateDir("library")
        try Self.writeTrack("Alpha", into: library)
        let dj = try lan.startDJ(host: 1, name: "Reloader", extra: ["--library", library])
        let listener = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        defer { listener.kill() }
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }

        try Self.writeTrack("Beta", into: library)
        let mark = dj.events.count
        let listenerMark = listener.events.count
        dj.kill(signal: SIGHUP)
        let queued = try dj.waitForEvent(after: mark, timeout: .seconds(5), "queued") { $0.name == "queued" }
        let titles = (queued["tracks"] as? [[String: Any]])?.compactMap { $0["title"] as? String }
        #expect(titles == ["Beta"])
        #expect(queued.int("queue_length") == 2)
        let notice = try dj.waitForEvent(after: mark, timeout: .seconds(5), "notice") { $0.name == "notice" }
        #expect(notice.string("message") == "Library reloaded: 1 new track.")
        try listener.waitForEvent(after: listenerMark, timeout: .seconds(3), "queue change") {
            $0.name == "state" && $0.string("change") == "queue"
        }

        // Nothing new: nothing queued, and the DJ still plays (SIGHUP does not end it).
        let again = dj.events.count
        dj.kill(signal: SIGHUP)
        let second = try dj.waitForEvent(after: again, timeout: .seconds(5), "notice") { $0.name == "notice" }
        #expect(second.string("message") == "Library reloaded: 0 new tracks.")
        #expect(dj.events[again...].allSatisfy { $0.name != "queued" })
        #expect(dj.isRunning)
    }
}
