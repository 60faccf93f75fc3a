import Foundation
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
}
