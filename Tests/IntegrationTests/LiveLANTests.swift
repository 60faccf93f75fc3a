import Foundation
import PartyRadioCore
import PartyRadioLive
import PartyRadioSecurity
import Testing

/// A live station on the namespace LAN (issue 28, docs/LIVE.md): a DJ runs `dj --live pipe:FIFO`,
/// a writer pours a tone with a click every 500 ms into the FIFO at real-time pace (as mpd's fifo
/// output does), and host 2 catches the station's multicast group. What it caught is checked here
/// with the core's codec, libsodium, ISA-L and libopus, restating the carrier's rules.
@Suite(
    "Live stations on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct LiveLANTests {
    static let frameNs = LiveFrameDuration.ms10.ns
    static let clickMs = 500

    struct Caught {
        var at: Int64
        var datagram: Datagram
    }

    /// Every datagram the capture wrote, decoded (the ones that do not decode are counted).
    static func caught(_ path: String) throws -> (items: [Caught], undecodable: Int) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var items: [Caught] = []
        var undecodable = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let at = Int64(parts[0]), let bytes = Hex.decode(String(parts[1])),
                let datagram = try? Datagram.decode(bytes)
            else {
                undecodable += 1
                continue
            }
            items.append(Caught(at: at, datagram: datagram))
        }
        return (items, undecodable)
    }

    /// Host `host` catching the station's `group` (`ADDRESS:PORT`, split) for `seconds` into `path`
    /// (Tests/Fixtures/group_capture.py, each datagram with its arrival), once it is ready.
    static func captureGroup(_ lan: Testbed, host: Int, group: [Substring], seconds: Int, path: String) throws
        -> TestbedProcess
    {
        let capture = try lan.spawn(
            host: host,
            [
                "python3", "-u", Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/group_capture.py").path,
                String(group[0]), String(group[1]), try lan.ip(host: host), String(seconds), path,
            ])
        try capture.waitForLine(containing: "ready", timeout: .seconds(15))
        return capture
    }

    /// Ends a capture that has caught what the test needs (SIGTERM: it writes what it heard and says
    /// "done"), instead of waiting out its seconds.
    static func stopCapture(_ capture: TestbedProcess) throws {
        capture.kill()
        try capture.waitForLine(containing: "done", timeout: .seconds(15))
    }

    /// When each caught frame's first sample was taken, by frame number (the station's stamps, the
    /// truth a page's plan is checked against).
    static func stamps(caught path: String) throws -> [UInt64: Int64] {
        Dictionary(try frames(caught: path).map { ($0.sequence, $0.firstSample.ns) }, uniquingKeysWith: { a, _ in a })
    }

    /// The live frames a capture caught, in frame order.
    static func frames(caught path: String) throws -> [LiveFrame] {
        try caught(path).items.compactMap { item -> LiveFrame? in
            if case .liveFrame(let frame) = item.datagram.message { return frame }
            return nil
        }.sorted { $0.sequence < $1.sequence }
    }

    /// A real `listen` of "Live Party" on `host`, playing into the sound server `env` points at;
    /// returned once tuned in.
    static func startListener(_ lan: Testbed, host: Int, env: [String: String], extra: [String] = []) throws
        -> TestbedProcess
    {
        let listener = try lan.spawn(
            host: host,
            [
                Testbed.partyradioBinary, "listen", "Live Party", "--json-events", "-v", "--state-dir",
                lan.stateDir("listener\(host)"),
            ] + extra, env: env)
        try listener.waitForEvent(timeout: .seconds(30), "tuned in") { $0.name == "tuned_in" }
        return listener
    }

    /// A DJ on host 1 broadcasting "Live Party" from a FIFO in the test's state directory.
    static func startLiveDJ(_ lan: Testbed, extra: [String] = []) throws -> (
        dj: TestbedProcess, dir: String, fifo: String
    ) {
        let dir = lan.stateDir("live")
        let fifo = "\(dir)/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let dj = try lan.startDJ(
            host: 1, name: "Live Party", extra: ["--live", "pipe:\(fifo)?sampleformat=48000:16:2"] + extra)
        return (dj, dir, fifo)
    }

    @Test("dj --live pipe: frames in sequence, stamped a frame apart, signed, FEC that rebuilds, audio that decodes")
    func pipeToGroup() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Repairs after every block, not only while a listener loses frames: the FEC is checked here.
        let (dj, dir, fifo) = try Self.startLiveDJ(lan, extra: ["--live-repairs", "always"])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let stationHex = try #require(started.string("id"))
        let group = try #require(started.string("group")).split(separator: ":")
        let nowPlaying = try dj.waitForEvent("state") { $0.name == "state" }["now_playing"] as? [String: Any]
        #expect(nowPlaying?["title"] as? String == "Live", "a live station without player metadata says Live")

        // Host 2 catches the group while a writer plays 3 s, goes away, and comes back for 1.5 s.
        let capturePath = "\(dir)/caught.txt"
        let capture = try Self.captureGroup(lan, host: 2, group: group, seconds: 14, path: capturePath)
        let writer = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/live_pcm_writer.py").path
        let before = dj.events.count
        let first = try lan.run(
            host: 1, ["python3", "-u", writer, fifo, "3", String(Self.clickMs)], timeout: .seconds(60))
        #expect(first.exit == 0, "\(first.stderr)")
        try dj.waitForEvent(after: before, timeout: .seconds(10), "silent") {
            $0.name == "warning" && ($0.string("message") ?? "").contains("silent")
        }
        Thread.sleep(forTimeInterval: 0.5)  // longer than a stream's gap (LiveStamper.gapNs): a new stream
        let second = try lan.run(
            host: 1, ["python3", "-u", writer, fifo, "1.5", String(Self.clickMs)], timeout: .seconds(60))
        #expect(second.exit == 0, "\(second.stderr)")
        try dj.waitForEvent(after: before, timeout: .seconds(10), "back") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("back")
        }
        Thread.sleep(forTimeInterval: 1)  // the second stream's last block and its repairs
        try Self.stopCapture(capture)

        let (items, undecodable) = try Self.caught(capturePath)
        #expect(undecodable == 0, "every datagram on the group decodes")
        var frames: [(at: Int64, frame: LiveFrame)] = []
        var repairs: [LiveRepair] = []
        for item in items {
            let datagram = item.datagram
            switch datagram.message {
            case .liveFrame(let frame): frames.append((item.at, frame))
            case .liveRepair(let repair): repairs.append(repair)
            default: continue
            }
            // Signed by the station's own key: the signature holds and the key owns the station's ID.
            #expect(Sodium.verify(datagram), "a live datagram whose signature does not hold")
            #expect(datagram.header.stationID.hex == stationHex)
            #expect(Sodium.stationID(for: datagram.header.sender) == datagram.header.stationID)
        }
        print("live: caught \(items.count) datagrams, \(frames.count) frames, \(repairs.count) repairs")
        // 4.5 s of audio in 10 ms frames; a clean bridge loses none, a loaded machine a few.
        #expect(frames.count >= 420 && frames.count <= 452, "\(frames.count) frames for 450")

        // Two streams (the writer went away between them); within one, numbers rise by one and first
        // samples by one frame length; each first sample is no later than its arrival.
        var streams: [[LiveFrame]] = [[]]
        for (index, (at, frame)) in frames.enumerated() {
            #expect(frame.duration == .ms10 && frame.codec == .opusStereo48k)
            #expect(frame.firstSample.ns + Self.frameNs <= at, "a frame stamped after it could have been read")
            #expect(at - frame.firstSample.ns < Nanos.seconds(2), "a stamp far behind its arrival")
            if index > 0 {
                let last = frames[index - 1].frame
                #expect(frame.sequence > last.sequence, "numbers only rise")
                if frame.firstSample.ns - last.firstSample.ns >= LiveStamper.gapNs {
                    streams.append([])
                } else {
                    let steps = Int64(frame.sequence - last.sequence)
                    #expect(frame.firstSample.ns - last.firstSample.ns == steps * Self.frameNs)
                }
            }
            streams[streams.count - 1].append(frame)
        }
        #expect(streams.count == 2, "the writer's return is a new stream")
        let inRow = zip(frames, frames.dropFirst()).filter { $0.1.frame.sequence == $0.0.frame.sequence + 1 }.count
        #expect(inRow >= frames.count - 10, "frames in a row: \(inRow) of \(frames.count)")

        // FEC: each block of 4 frames and its 2 repairs; with two of its frames dropped here, ISA-L's
        // decoder gives them back byte for byte.
        let bySequence = Dictionary(frames.map { ($0.frame.sequence, $0.frame) }, uniquingKeysWith: { a, _ in a })
        let blocks = Dictionary(grouping: repairs, by: \.firstSequence)
        var rebuilt = 0
        for (first, parity) in blocks {
            let k = parity[0].dataCount
            let block = (0..<UInt64(k)).compactMap { bySequence[first + $0] }
            guard block.count == k, k == 4, Set(parity.map(\.parityIndex)).count == 2 else { continue }
            let length = parity[0].shard.count
            #expect(length == LiveFEC.shardOverhead + block.map(\.payload.count).max()!)
            var shards: [[UInt8]?] = block.map { LiveFEC.shard(of: $0, length: length) }
            shards[1] = nil
            shards[3] = nil
            shards += parity.sorted { $0.parityIndex < $1.parityIndex }.map(\.shard)
            let data = try #require(ISALErasureCode().recover(shards, dataCount: k))
            #expect(LiveFEC.frame(fromShard: data[1], sequence: first + 1) == block[1])
            #expect(LiveFEC.frame(fromShard: data[3], sequence: first + 3) == block[3])
            rebuilt += 1
        }
        #expect(rebuilt >= 80, "blocks rebuilt: \(rebuilt)")

        // The audio: each frame decodes to 10 ms of stereo; the tone is there, and the clicks the
        // writer put 500 ms apart are 500 ms apart by the stamps.
        let decoder = try OpusDecoder()
        let stream = streams[0]
        var clicks: [Int64] = []
        var squares = 0.0
        var count = 0
        var inClick = false
        for frame in stream {
            let pcm = try decoder.decode(frame.payload)
            #expect(pcm.count == 480 * 2)
            for (index, value) in pcm.enumerated() where index % 2 == 0 {
                let magnitude = abs(Int(value))
                if magnitude > 20_000 && !inClick {
                    clicks.append(frame.firstSample.ns + Int64(index / 2) * 1_000_000_000 / 48_000)
                }
                inClick = magnitude > 20_000 || (inClick && magnitude > 12_000)
                squares += Double(value) * Double(value)
                count += 1
            }
        }
        let rms = (squares / Double(max(count, 1))).squareRoot()
        #expect(rms > 3_000 && rms < 12_000, "the tone's level: rms \(rms)")
        // A writer that stalled (this machine is loaded) makes the DJ skip whole frames, never less:
        // a spacing is 500 ms plus whole frames; most are 500 ms exactly.
        let spacings = zip(clicks, clicks.dropFirst()).map { $1 - $0 - Int64(Self.clickMs) * 1_000_000 }
        print("live: clicks \(clicks.count), spacings beyond 500 ms \(spacings.map { Double($0) / 1e6 }) ms")
        #expect(clicks.count >= 5, "clicks heard: \(clicks.count)")
        for extra in spacings {
            let frames = (extra + Self.frameNs / 2) / Self.frameNs
            #expect(frames >= 0 && abs(extra - frames * Self.frameNs) <= 2_000_000, "a click \(extra) ns off 500 ms")
        }
        #expect(spacings.filter { abs($0) <= 2_000_000 }.count * 2 >= spacings.count, "\(spacings)")
        dj.kill(signal: SIGINT)
        _ = dj.wait(timeout: .seconds(10))
    }

    /// Where the clicks are in frames' audio, by their stamps (station time): the first sample of
    /// each run louder than 20,000, decoded with libopus, less the codec's lookahead. The decoded
    /// audio lags what was captured by it (OpusTests: a click is found 312 samples later), and a
    /// frame's stamp is the time of its first captured sample, so the time of a click found at
    /// sample n of a frame's decoded audio is `stamp + n / rate − lookahead`.
    static func clickStamps(_ frames: [LiveFrame]) throws -> [Int64] {
        let decoder = try OpusDecoder()
        var clicks: [Int64] = []
        var inClick = false
        for frame in frames {
            for (index, value) in try decoder.decode(frame.payload).enumerated() where index % 2 == 0 {
                let magnitude = abs(Int(value))
                if magnitude > 20_000 && !inClick {
                    clicks.append(
                        frame.firstSample.ns + Int64(index / 2) * 1_000_000_000 / 48_000 - LivePlayer.codecDelayNs)
                }
                inClick = magnitude > 20_000 || (inClick && magnitude > 12_000)
            }
        }
        return clicks
    }

    /// The whole way (issue 28): a DJ on host 1 reads a click track from a FIFO at real-time pace, a
    /// real `listen` on host 2 plays the station into a PulseAudio of its own (a null sink), and the
    /// sink's monitor is recorded there. Host 3 catches the group, for the clicks' stamps. A live
    /// listener plays a sample stamped T at T + 60 ms of the station's clock (docs/LIVE.md); on one
    /// machine the DJ's clock and the listener's are the same CLOCK_REALTIME, so a click stamped T is
    /// heard near T + 60 ms by the recorder's clock.
    @Test(
        "dj --live to a listener's speaker: frames played, the clicks heard near their stamp + 60 ms",
        .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
    func pipeToSpeaker() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (dj, dir, fifo) = try Self.startLiveDJ(lan)
        defer { dj.kill() }
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let group = try #require(started.string("group")).split(separator: ":")

        let (sound, env) = try lan.startSoundServer(host: 2)
        defer { sound.kill() }
        let listener = try Self.startListener(lan, host: 2, env: env)
        defer { listener.kill() }

        let seconds = 6
        let written = seconds * 1000 / Self.clickMs
        let monitorPath = "\(dir)/monitor.raw"
        let recorder = try lan.spawn(
            host: 2,
            [
                "python3", "-u", Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/monitor_record.py").path,
                String(seconds + 6), monitorPath,
            ], env: env)
        defer { recorder.kill() }
        try recorder.waitForLine(containing: "ready", timeout: .seconds(15))
        let capturePath = "\(dir)/caught.txt"
        let capture = try Self.captureGroup(lan, host: 3, group: group, seconds: seconds + 4, path: capturePath)
        let writer = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/live_pcm_writer.py").path
        let before = listener.events.count
        let wrote = try lan.run(
            host: 1, ["python3", "-u", writer, fifo, String(seconds), String(Self.clickMs)], timeout: .seconds(60))
        #expect(wrote.exit == 0, "\(wrote.stderr)")
        // The null sink's block: its monitor gets each block that long before it plays it
        // (PulseOutputTests), so a click is recorded that much before it is heard. Read while the
        // recorder runs: the sink's latency is the least its streams and its monitor's reader ask for.
        let sinks = try lan.run(host: 2, ["/usr/bin/pactl", "list", "sinks"], env: env).stdout
        let blockMs = sinks.split(separator: "\n").first { $0.contains("configured") }.flatMap { line in
            line.split(separator: " ").drop { $0 != "configured" }.dropFirst().first.flatMap { Double($0) }
        }.map { $0 / 1000 }
        try capture.waitForLine(containing: "done", timeout: .seconds(30))
        let done = try recorder.waitForLine(containing: "done", timeout: .seconds(30))

        // The listener's counters (every 5 s): frames played, few concealed.
        let status = try listener.waitForEvent(after: before, timeout: .seconds(20), "live_status played") {
            $0.name == "live_status" && ($0.int("played") ?? 0) > 0
        }
        Thread.sleep(forTimeInterval: 5.5)  // the next report, after the stream ended
        let last = listener.events[before...].last(where: { $0.name == "live_status" }) ?? status
        let played = last.int("played") ?? 0
        let concealed = last.int("concealed") ?? 0
        print(
            "live e2e: live_status played \(played) received \(last.int("received") ?? 0) concealed \(concealed) "
                + "recovered \(last.int("recovered") ?? 0) late \(last.int("late") ?? 0) "
                + "underruns \(last.int("underruns") ?? 0) placements \(last.int("placements") ?? 0) "
                + "skipped \(last.int("skipped") ?? 0) error_us \(last.int("error_us") ?? 0) ppm \(last.int("ppm") ?? 0)"
        )
        // 6 s of 10 ms frames: most of 600 played; concealment only for the odd loss on a loaded machine.
        #expect(played >= 400, "frames played: \(played)")
        #expect(concealed * 10 <= played, "concealed \(concealed) of \(played)")

        // The clicks' stamps, from the frames on the group.
        let frames = try Self.frames(caught: capturePath)
        let stamps = try Self.clickStamps(frames)

        // The clicks on the speaker: runs above 16,000, twice the tone's 8,000 and about half the clicks'
        // 30,000 (a fixed level: one overshoot or a placement's step at full scale would lift a level
        // relative to the peak above the clicks Opus smears), at least 100 ms apart, timed by the
        // recorder's sample 0 and the monitor's own rate (LivePulseLANTests.clicks).
        let data = try Data(contentsOf: URL(fileURLWithPath: monitorPath))
        let peak = data.withUnsafeBytes { $0.bindMemory(to: Int16.self).reduce(0) { max($0, abs(Int($1))) } }
        let heard = try LivePulseLANTests.clicks(recording: monitorPath, done: done)
        let rate = done.split(separator: " ").dropFirst(6).first.flatMap { Double($0) } ?? 48_000
        // Each click heard against the nearest stamp + 60 ms.
        let errors = heard.compactMap { at -> Double? in
            stamps.map { Double(at - ($0 + 60_000_000)) / 1e6 }.min { abs($0) < abs($1) }
        }
        let intervals = zip(heard, heard.dropFirst()).map { Double($1 - $0) / 1e6 }
        // Which stamps have a click near them: a failure's story (missed at the start, the end, or here and there).
        let matched = stamps.map { stamp in
            heard.contains { abs($0 - (stamp + 60_000_000)) <= 50_000_000 } ? "x" : "."
        }
        print(
            "live e2e: \(written) clicks written, \(stamps.count) on the group, \(heard.count) heard (peak \(peak)); "
                + "heard - (stamp + 60 ms): \(errors.map { ($0 * 10).rounded() / 10 }) ms; "
                + "intervals \(intervals.map { $0.rounded() }) ms; stamps heard \(matched.joined()); "
                + "the sink's block \(blockMs.map { "\($0) ms" } ?? "?"), its monitor's rate \(rate) a second")
        #expect(stamps.count * 4 >= written * 3, "clicks on the group: \(stamps.count) of \(written)")
        #expect(
            heard.count * 4 >= written * 3 && heard.count <= written + 1, "clicks heard: \(heard.count) of \(written)")
        // Generous: a loaded machine delays the recorder's reads; a player off by a frame's worth of
        // placement or a latency left out is still inside, one that ignores the stamps is not.
        let onTime = errors.filter { abs($0) <= 50 }.count
        // Half at least: under the test suite's own load (CI) the output runs dry now and then and
        // loses a click (tracked in docs/LIVE.md); a player 100 ms late or silent hears none on time.
        #expect(onTime * 2 >= written, "clicks within 50 ms of stamp + 60 ms: \(onTime) (\(errors))")
        #expect(listener.isRunning, "the listener stopped: \(listener.text(.stderr).suffix(2_000))")
        dj.kill(signal: SIGINT)
        _ = dj.wait(timeout: .seconds(10))
    }
}
