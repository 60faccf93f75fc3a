import Foundation
import PartyRadioCore
import Testing

/// A listener on a host that drops a quarter of its packets both ways (issue 11, item 2): the
/// media cache fetches each track as parallel byte ranges (retried, resumed) and the next one
/// ahead, so the listener starts within 5 s and its player neither starves nor drifts, across a
/// track boundary. It runs the default: a track still being fetched plays from its partial file
/// (docs/MEDIA.md, "Playing while it downloads"). Behaviour with generous bounds; the figures are
/// in scripts/bench-lossy.py.
@Suite(
    "Lossy links", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct LossyLinkLANTests {
    static let second: Int64 = 1_000_000_000

    @Test("25 % loss both ways on the listener's host: it plays within seconds and stays in sync across a track change")
    func playsUnderLoss() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Lossy", playing: true, extra: ["--trace", lan.tracePath("dj")])
        defer { withExtendedLifetime(dj) {} }
        try lan.loss(host: 2, percent: 25, direction: .both)
        let started = realTimeNs()
        let listener = try lan.startListener(
            host: 2, role: "listener", station: "Lossy", extra: ["--timeout", "20", "-v"])
        defer { withExtendedLifetime(listener) {} }
        // The first track ends within 40 s of the DJ's start (demo tracks are 20-40 s); 45 s covers a change.
        sleep(untilTrue: started + 45 * Self.second)
        try lan.loss(host: 2, percent: 0)
        let samples = lan.measureListener("listener")
        let playing = samples.filter { $0.line.playerPositionMs != nil }
        let first = try #require(playing.first, "the listener never played: \(samples.summary)")
        let fetches = listener.text(.stderr).split(separator: "\n").filter {
            $0.contains("cache") || $0.contains("] load")
        }
        print("listener's media cache:\n" + fetches.joined(separator: "\n"))
        let startSeconds = Double(first.trueTimeNs - started) / 1e9
        let tuned = listener.events.first { $0.name == "tuned_in" }.map { Double($0.timeNs - started) / 1e9 }
        let synchronised = samples.first { $0.line.djTimeNs != nil }.map { Double($0.trueTimeNs - started) / 1e9 }
        print(
            "25 % loss: tuned in after \(tuned ?? -1) s, clock known after \(synchronised ?? -1) s, first audio after "
                + "\(startSeconds) s; \(playing.summary)")
        // The goal is 5 s; a debug build on this machine started after 2.3-5.1 s while the whole
        // ~1 MB file was fetched before it played (1.5-4.5 s at this loss), 0.9 s since it plays
        // the partial file, and 8 s on a loaded CI run: that is the benchmark's business
        // (docs/BENCHMARKS.md, "A listener on a lossy link"). The test checks behaviour: it
        // plays well before the track ends, and (below) never starves once it does, which streaming
        // did not do at this loss (13 s gaps).
        #expect(startSeconds <= 15, "first player position \(startSeconds) s after start")

        let after = samples.filter { $0.trueTimeNs >= first.trueTimeNs }
        var longestGap: Int64 = 0
        var longestGapAt = 0.0
        var gapStart: Int64?
        for sample in after {
            if sample.line.playerPositionMs == nil {
                gapStart = gapStart ?? sample.trueTimeNs
            } else if let start = gapStart {
                if sample.trueTimeNs - start > longestGap {
                    longestGap = sample.trueTimeNs - start
                    longestGapAt = Double(start - started) / 1e9
                }
                gapStart = nil
            }
        }
        if let start = gapStart, let last = after.last, last.trueTimeNs - start > longestGap {
            longestGap = last.trueTimeNs - start
            longestGapAt = Double(start - started) / 1e9
        }
        print("25 % loss: longest gap without a player position \(Double(longestGap) / 1e9) s, at \(longestGapAt) s")
        // Starving is what streaming did at this loss: gaps of 13 s. How short the gaps are is the
        // benchmark's figure (a debug build under CI load once showed 1.04 s); the test bounds it
        // where no starving player could pass.
        #expect(longestGap <= 3 * Self.second, "the player starved for \(Double(longestGap) / 1e9) s")

        let tracks = Set(playing.compactMap(\.line.trackID))
        #expect(tracks.count >= 2, "played across a track change: \(tracks)")
        let errors = playing.compactMap { $0.playerErrorMs.map(abs) }.sorted()
        try #require(errors.count >= 200, "\(errors.count) measured player positions")
        let p90 = errors[errors.count * 9 / 10]
        print("25 % loss: player error p50 \(errors[errors.count / 2]) ms, p90 \(p90) ms, max \(errors.last!) ms")
        #expect(p90 <= 20, "player error p90 \(p90) ms: \(playing.playerErrors(every: 20))")
    }
}

/// Catalog tracks fetched ahead (issue 11, item 2): the DJ names where the next tracks come from
/// (docs/PROTOCOL.md, "Next sources"), so a listener's media cache fetches the next catalog
/// preview before the boundary, across a lossy link, and plays it from the cache. Apple's API and
/// its preview CDN are the fixture server, on the DJ's host, reached over the testbed's LAN.
@Suite(
    "Catalog tracks fetched ahead", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct CatalogPrefetchLANTests {
    @Test(
        "25 % loss on the listener's host: the next catalog preview is in its cache before it starts, and plays from there"
    )
    func nextCatalogTrackIsCachedBeforeItStarts() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (fixture, origin) = try lan.startPreviewServer(host: 1)
        defer { withExtendedLifetime(fixture) {} }
        // Three 30-second previews: One More Time, Get Lucky, CUFF IT.
        let dj = try lan.startDJ(
            host: 1, name: "Previews", extra: ["--add", "697195462,617154366,1440935467"],
            env: ["PARTYRADIO_ITUNES_URL": origin])
        defer { withExtendedLifetime(dj) {} }
        try lan.loss(host: 2, percent: 25, direction: .both)
        let listener = try lan.startListener(
            host: 2, role: "listener", station: "Previews", extra: ["--timeout", "20", "-v"])
        defer { withExtendedLifetime(listener) {} }
        let tuned = try listener.waitForEvent(timeout: .seconds(25), "tuned in") { $0.name == "tuned_in" }
        let playing = (tuned["station"] as? [String: Any])?["now_playing"] as? [String: Any]
        try #require(playing?["track_id"] as? String == "697195462", "\(String(describing: playing))")

        // The next preview's file, as the cache names it, appears before the track changes.
        let next = "\(origin)/itunes-assets/AudioPreview125/getlucky.m4a"
        let cached = lan.stateDir("listener") + "/media-cache/" + MediaCachePlan.fileName(for: next)
        var cachedAt: Int64?
        let deadline = realTimeNs() + 40 * LossyLinkLANTests.second
        while realTimeNs() < deadline {
            if cachedAt == nil, FileManager.default.fileExists(atPath: cached) { cachedAt = realTimeNs() }
            if listener.events.contains(where: { $0.string("change") == "track" && $0.int("queue_index") == 1 }) {
                break
            }
            usleep(50_000)
        }
        let change = try #require(
            listener.events.first { $0.string("change") == "track" && $0.int("queue_index") == 1 },
            "the station never moved to the second track")
        #expect(change.string("track_id") == "617154366")
        let path = "/itunes-assets/AudioPreview125/getlucky.m4a"
        let hits = try previewHits(lan, origin: origin)[path]
        let logged = try? listener.waitForLine(containing: "playing 617154366", timeout: .seconds(20), stream: .stderr)
        sleep(untilTrue: realTimeNs() + 3 * LossyLinkLANTests.second)
        try lan.loss(host: 2, percent: 0)
        let samples = lan.measureListener("listener")
        let played = samples.filter { $0.line.trackID == "617154366" && $0.line.playerPositionMs != nil }
        let fetches = listener.text(.stderr).split(separator: "\n").filter {
            $0.contains("cache") || $0.contains("playing ")
        }
        print("listener's media cache:\n" + fetches.joined(separator: "\n"))
        print(
            "next catalog track: cached "
                + (cachedAt.map { "\(Double(change.timeNs - $0) / 1e9) s before" } ?? "not before")
                + " the listener heard of the change; it played "
                + (played.first.map { "\(Double($0.trueTimeNs - change.timeNs) / 1e9) s after it" } ?? "never"))

        // In the cache before the boundary, and played from there: nothing fetches the URL again.
        let fetchedAhead = try #require(cachedAt, "Get Lucky was not in the cache before it started")
        #expect(fetchedAhead < change.timeNs)
        #expect((hits ?? 0) > 0)
        #expect(logged?.contains("from the cache") == true, "\(logged ?? "never loaded")")
        #expect(try previewHits(lan, origin: origin)[path] == hits, "the preview was fetched again after it started")
        #expect(played.count >= 10, "the listener did not play Get Lucky: \(samples.summary)")
    }

    /// Requests the fixture served per preview path (it counts each).
    func previewHits(_ lan: Testbed, origin: String) throws -> [String: Int] {
        let answer = try lan.run(host: 1, ["curl", "-s", "\(origin)/_previews"])
        let object = try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: [String: Any]]
        return (object ?? [:]).mapValues { ($0["requests"] as? NSNumber)?.intValue ?? 0 }
    }
}
