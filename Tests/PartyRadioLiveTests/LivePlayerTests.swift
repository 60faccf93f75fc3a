import Foundation
import PartyRadioCore
import PartyRadioLive
import Testing

/// The live player end to end on real parts: a generator encodes silence with clicks at known
/// station times (the real OpusEncoder), sends each frame when a DJ would (as its capture period
/// ends) and a block's repairs after its last frame (ISA-L), drops some frames on the way, and the
/// player writes to a real PulseAudio null sink. The station clock is CLOCK_MONOTONIC here, so the
/// clicks found on the sink's monitor are compared with `T + delay` directly.
/// In the PulseOutput suite's serialized run: two sound servers at once on a 2-core machine starve
/// each other's outputs.
extension PulseOutputTests {
    /// User and system time of this process's thread named `name` (/proc/self/task/*/stat), in s.
    static func threadCPUSeconds(named name: String) -> Double? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the name: state is field 3; utime and stime are fields 14 and 15.
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        return nil
    }

    @Test(.enabled(if: NullSinkServer.available)) func clicksAreHeardAtTheirStationTimePlusTheDelay() throws {
        let sound = try NullSinkServer()
        let delayNs: Int64 = 60_000_000
        let player = LivePlayer(options: .init(delayNs: delayNs, server: sound.address, sink: "party")) {
            DJTime(ns: monotonicNs())
        }
        try player.start()
        defer { player.stop() }
        let deadline = Date().addingTimeInterval(15)
        while !player.isStarted && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(player.isStarted)
        // Recorded from when the player's stream runs: an idle null sink gives its monitor nothing, and
        // the recorder's fit of the monitor's rate needs it running.
        let recorder = try MonitorRecorder(server: sound.address)
        defer { recorder.stop() }

        let encoder = try OpusEncoder(bitrate: 128_000, duration: .ms10)
        let code = ISALErasureCode()
        let frameNs: Int64 = 10_000_000
        let frames = 400  // 4 s
        let clickEvery = 50  // a click every 500 ms, in the first frame of every 50th
        let start = monotonicNs() + 50_000_000
        var expected: [Int64] = []
        var block: [LiveFrame] = []
        // Sent punctually (at real-time priority): under CI's load a normal thread waits tens of
        // milliseconds for a core, and frames the test sends late would be its own disturbance.
        try RealTimeThread.whileRealTime {
            for index in 0..<frames {
                var pcm = [Int16](repeating: 0, count: 480 * 2)
                if index % clickEvery == 10 {
                    for sample in 0..<96 { pcm[sample * 2] = sample % 8 < 4 ? 30_000 : -30_000 }
                    for sample in 0..<96 { pcm[sample * 2 + 1] = pcm[sample * 2] }
                    expected.append(start + Int64(index) * frameNs + delayNs)
                }
                let frame = LiveFrame(
                    sequence: 1_000 + UInt64(index), firstSample: DJTime(ns: start + Int64(index) * frameNs),
                    duration: .ms10, payload: try encoder.encode(pcm))
                // Sent as the DJ sends it: once its 10 ms were captured.
                let sendAt = start + Int64(index + 1) * frameNs
                while monotonicNs() < sendAt { Thread.sleep(forTimeInterval: 0.0005) }
                // Every 9th frame is lost, two clicks among them: FEC brings them back.
                if index % 9 != 1 { player.receive(frame) }
                block.append(frame)
                if block.count == 4 {
                    for repair in LiveFEC.repairs(for: block, parityCount: 2, code: code) { player.receive(repair) }
                    block = []
                }
            }
        }
        let sinkBlock = try #require(try sound.sinkBlockNs(), "pactl shows the null sink's configured latency")
        Thread.sleep(forTimeInterval: 0.5)
        let audioCPU = Self.threadCPUSeconds(named: "partyradio-live")
        let counters = player.counters
        #expect(player.failure == nil, "\(player.failure ?? "")")
        let (samples, startNs, rate) = recorder.recording
        let heard = clickIndexes(samples).map { startNs + Int64((Double($0) * 1e9 / rate).rounded()) }
        // The monitor gets the sink's block before it is played (PulseOutputTests): heard that much later.
        let errors = heard.compactMap { time in expected.map { time + sinkBlock - $0 }.min { abs($0) < abs($1) } }
            .map { Double($0) / 1e6 }
        let sorted = errors.sorted()
        let median = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        let blockMs = Double(sinkBlock) / 1e6
        let heardText =
            "clicks heard \(heard.count) of \(expected.count) (the monitor's rate \((rate * 10).rounded() / 10)); "
            + "heard + block (\(blockMs) ms) - (T + delay)"
        print(
            "LivePlayer: \(heardText), ms: "
                + "\(errors.map { ($0 * 100).rounded() / 100 }), median \(median), worst "
                + "\(errors.map(abs).max() ?? .nan); encoder lookahead \(encoder.lookahead) samples; "
                + "audio thread CPU \(audioCPU.map { "\(($0 * 1000).rounded()) ms" } ?? "?") over ~5 s; \(counters)")
        // All of them on a quiet machine; under CI's load an output that ran dry loses one now and then.
        #expect(heard.count * 4 >= expected.count * 3, "clicks heard: \(heard.count) of \(expected.count)")
        // Placed once: the clicks within a little more than a loaded machine's jitter; a placement a
        // frame off, a latency left out or the codec's delay forgotten (6.5 ms) moves every click
        // outside. Three in four, as the sound server itself is starved now and then under CI's load
        // (seen once: the monitor's rate 48009.9, the clicks from -2.8 to +5.1 ms, 7 of 8 within 3).
        if counters.placements == 1 {
            let within = errors.filter { abs($0) < 3 }.count
            #expect(within * 4 >= errors.count * 3, "clicks off by \(errors) ms")
        } else {
            // Placed again (a loaded machine starved the audio thread): the clicks within the 8 ms
            // beyond which it places again (seen in CI: 6-7.8 ms after an output that ran dry, taken
            // away slowly by the drift correction), but one heard while the output was dry comes that
            // much later (33.6 ms once in CI, 14 placements). A placement a frame off misses every
            // click.
            let within = errors.filter { abs($0) < 8 }.count
            #expect(within * 4 >= errors.count * 3, "clicks off by \(errors) ms")
            #expect(abs(median) < 8, "clicks off by \(errors) ms")
        }
        // 400 frames, 45 lost: each rebuilt from its block if the block's repairs came before the
        // output needed it, else concealed; the rest played.
        let buffer = counters.buffer
        // Under the test suite's own load (CI: three LAN processes beside it) a few frames may come
        // out late and the output be placed again a few times; a player that drops or stalls plays
        // far fewer.
        #expect(buffer.received == 355 && buffer.played >= 300 && buffer.late <= 40, "\(buffer)")
        #expect(buffer.recovered > 0 && buffer.recovered + buffer.concealed >= 45, "\(buffer)")
        // Each starvation places the output again: 25 seen in 4 s under CI's load (one underrun, 38 frames
        // skipped). An output placed again and again by its own readings (one that leaves a latency out,
        // or takes its jitter for an error) is placed at nearly every frame: hundreds.
        #expect(counters.placements <= 50 && counters.skipped <= 100, "\(counters)")
    }
}
