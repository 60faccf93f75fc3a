import Foundation
import PartyRadioCore
import Testing

/// A catalog station's first track on a lossy link (issue 11, item 2): the listener does not wait
/// for the whole preview to be in its media cache, it plays the file as far as it has come while
/// the cache fetches the rest (docs/MEDIA.md, "Fetching ahead"). Apple's preview CDN is the
/// catalog fixture server on the DJ's host, sending each answer slowly, so the download takes
/// seconds longer than the start does, whatever the loss does to it. Behaviour only: the figures
/// are the benchmark's (scripts/bench-lossy.py, docs/BENCHMARKS.md, "A listener on a lossy link").
@Suite(
    "A track played while it downloads", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct PartialPlaybackLANTests {
    @Test("25 % loss on the listener's host: the first catalog preview plays before its file is complete, then on")
    func firstCatalogTrackPlaysWhileItDownloads() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // 56 KB/s an answer: each range comes faster than the preview plays (44.1 KB/s), and the six
        // together bring the 1.3 MB in no less than 4 s.
        let (fixture, origin) = try lan.startPreviewServer(host: 1, options: ["--preview-rate", "56000"])
        defer { withExtendedLifetime(fixture) {} }
        let dj = try lan.startDJ(
            host: 1, name: "Slow previews", extra: ["--add", "697195462,617154366"],
            env: ["PARTYRADIO_ITUNES_URL": origin])
        defer { withExtendedLifetime(dj) {} }
        try lan.loss(host: 2, percent: 25, direction: .both)
        let listener = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "listen", "Slow previews", "--json-events", "--audio-driver", "null",
                "--trace", lan.tracePath("listener"), "--state-dir", lan.stateDir("listener"), "--timeout", "20", "-v",
            ])  // the default: no PARTYRADIO_MEDIA_CACHE_PARTIAL (=0 would wait for the whole file)
        defer { withExtendedLifetime(listener) {} }

        let load = try listener.waitForLine(containing: "playing 697195462", timeout: .seconds(25), stream: .stderr)
        #expect(load.contains("from the cache while it downloads"), "\(load)")
        _ = try? listener.waitForLine(containing: "onemoretime.m4a in", timeout: .seconds(40), stream: .stderr)
        sleep(untilTrue: realTimeNs() + 3 * LossyLinkLANTests.second)
        try lan.loss(host: 2, percent: 0)

        let log = listener.text(.stderr).split(separator: "\n").map(String.init)
        print(
            "listener's player and media cache:\n"
                + log.filter { $0.contains("cache") || $0.contains("playing") }
                .joined(separator: "\n"))
        // In the listener's own log: the player's first start, then the download's end.
        let started = try #require(log.firstIndex { $0.contains("playing from local") }, "the player never started")
        let fetched = try #require(
            log.firstIndex { $0.contains("media cache:") && $0.contains("onemoretime.m4a in") },
            "the preview's download never completed")
        #expect(started < fetched, "the player started only once the whole file was there")
        #expect(!log.contains { $0.contains("streaming") }, "the player fell back to the URL")
        let positions = TraceLine.read(lan.tracePath("listener")).filter {
            $0.trackID == "697195462" && $0.playerPositionMs != nil
        }
        #expect(positions.count >= 10, "the listener hardly played the preview: \(positions.count) positions")
        // Once it plays, it plays on while the rest arrives: no stretch without a position (a stall,
        // a seek waiting for bytes) longer than a second.
        let first = try #require(positions.first)
        let after = TraceLine.read(lan.tracePath("listener")).filter { $0.trueTimeNs >= first.trueTimeNs }
        var longestGap: Int64 = 0
        var gapStart: Int64?
        for line in after where line.trackID == nil || line.trackID == "697195462" {
            if line.playerPositionMs == nil {
                gapStart = gapStart ?? line.trueTimeNs
            } else if let start = gapStart {
                longestGap = max(longestGap, line.trueTimeNs - start)
                gapStart = nil
            }
        }
        #expect(longestGap <= LossyLinkLANTests.second, "the player stalled for \(Double(longestGap) / 1e9) s")
    }
}
