import Foundation
import PartyRadioLive
import Testing

@testable import PartyRadioNode

/// `--trace` keeps its promised 20 lines a second although the node's loop wakes irregularly.
@Suite struct TraceWriterTests {
    @Test func twentyLinesASecondFromAnIrregularLoop() throws {
        let path = NSTemporaryDirectory() + "trace-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try TraceWriter(path: path)
        let start: Int64 = 1_000_000_000_000
        var now = start
        var written = 0
        while now < start + 10_000_000_000 {  // 10 s of a loop waking every 13–20 ms
            if writer.isDue(now) {
                writer.write(
                    role: "dj", trueTimeNs: now, localTimeNs: now, djTimeNs: now, view: nil, playerPositionNs: nil,
                    latencyNs: 0, offsetNs: 0, driftPPM: 0)
                written += 1
            }
            now += Int64.random(in: 13_000_000...20_000_000)
        }
        #expect((198...202).contains(written), "\(written) lines in 10 s")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == written)
    }

    /// A live station's output is in the line in milliseconds, as the sync error is; a node with
    /// none writes nulls, never a zero that reads as "on time".
    @Test func aLiveOutputsReadingIsInTheLineAndNullWithoutOne() throws {
        let path = NSTemporaryDirectory() + "trace-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try TraceWriter(path: path)
        var counters = LivePlayerCounters()
        counters.lastErrorNs = -1_596_000
        counters.lastLatencyNs = 21_250_000
        counters.ppm = 538.5
        counters.placements = 1
        writer.write(
            role: "listener", trueTimeNs: 1, localTimeNs: 1, djTimeNs: 1, view: nil, playerPositionNs: nil,
            latencyNs: 0, offsetNs: 0, driftPPM: 0,
            live: counters)
        writer.write(
            role: "listener", trueTimeNs: 60_000_001, localTimeNs: 60_000_001, djTimeNs: 1, view: nil,
            playerPositionNs: nil, latencyNs: 0, offsetNs: 0, driftPPM: 0)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.count == 2)
        #expect(lines[0]["live_error_ms"] as? Double == -1.596)
        #expect(lines[0]["live_latency_ms"] as? Double == 21.25)
        #expect(lines[0]["live_ppm"] as? Double == 538.5)
        #expect(lines[0]["live_placements"] as? Int == 1)
        for key in ["live_error_ms", "live_latency_ms", "live_ppm", "live_placements"] {
            #expect(lines[1][key] is NSNull, "\(key) without a live output")
        }
    }
}
