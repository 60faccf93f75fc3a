import Foundation
import Testing

/// Synchronised playback on a namespace LAN, driving the real binary with mpv's null audio output:
/// clocks that are seconds and hundreds of ppm wrong converge, controls reach the players, a late
/// listener starts in the right place, loss does not derail the clock, and the DJ's media server
/// serves its queue and nothing else (issue 3).
///
/// Every node writes a `--trace`; errors are measured against the DJ's trace, which maps the true
/// clock that all namespaces share to the DJ's clock and the station's position (TraceHelpers.swift).
@Suite(
    "Synchronised playback on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct PlaybackLANTests {
    static let second: Int64 = 1_000_000_000

    @Test("Clocks seconds and ±200 ppm off converge within 3 s of joining and stay within 1 ms / 20 ms")
    func clocksConverge() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The DJ's clock is wrong too: nothing may rely on it being right.
        let dj = try lan.startDJ(
            host: 1, name: "Offbeat", playing: true,
            extra: ["--trace", lan.tracePath("dj"), "--clock-offset-ms", "400", "--clock-drift-ppm", "60"])
        let clocks = [(host: 2, offsetMs: 2500, driftPPM: 200), (host: 3, offsetMs: -1800, driftPPM: -200)]
        let listeners = try clocks.map { clock in
            try lan.startListener(
                host: clock.host, role: "listener\(clock.host)", station: "Offbeat", offsetMs: clock.offsetMs,
                driftPPM: clock.driftPPM)
        }
        let joined = try listeners.map { try $0.waitForEvent("tuned in") { $0.name == "tuned_in" }.timeNs }
        sleep(untilTrue: joined.max()! + 8 * Self.second + 300_000_000)

        let djTrace = TraceLine.read(lan.tracePath("dj"))
        let truth = DJTruth(djTrace: djTrace)
        try #require(!truth.isEmpty, "the DJ writes a trace")
        for (index, clock) in clocks.enumerated() {
            let samples = truth.measure(TraceLine.read(lan.tracePath("listener\(clock.host)")))
            let held = samples.within(joined[index] + 3 * Self.second...joined[index] + 8 * Self.second)
            let label = "listener \(clock.offsetMs) ms / \(clock.driftPPM) ppm"
            print("sync on the LAN, \(label), 3–8 s after joining: \(held.summary)")
            #expect(held.count >= 60, "\(label): \(held.count) trace lines in 5 s (20 a second are written)")
            #expect(held.worstLogicalMs < 1, "\(label) from 3 s after joining: \(held.summary)")
            #expect(held.playerCount >= held.count * 9 / 10, "\(label) plays: \(held.summary)")
            #expect(held.worstPlayerMs < 20, "\(label) from 3 s after joining: \(held.summary)")
            // It estimated the DJ's clock, not its own: the offset it undid is seconds large.
            let estimateGap = held.last.flatMap { sample in
                sample.line.djTimeNs.map { Double($0 - sample.line.localTimeNs) / 1e6 }
            }
            #expect(
                estimateGap.map { abs($0 - Double(400 - clock.offsetMs)) < 10 } == true,
                "\(label): DJ clock - own clock = \(String(describing: estimateGap)) ms")
        }
        // The DJ plays in time with its own station too.
        let djSamples = truth.measure(djTrace).within(joined.min()!...joined.max()! + 8 * Self.second)
        #expect(djSamples.playerCount >= djSamples.count * 9 / 10, "the DJ plays: \(djSamples.summary)")
        // Held within 20 ms once a track is under way: the first second of a track is the DJ's own
        // player loading it (one CI run saw a single 88 ms sample there, corrected at once).
        let underWay = djSamples.filter { ($0.truthMs ?? 0) >= 1_000 }
        #expect(underWay.worstPlayerMs < 20, "the DJ's own player: \(underWay.summary)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Skip, pause, resume and seek reach the listener's player within a second")
    func controlsReachPlayers() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Console", extra: ["--trace", lan.tracePath("dj")])
        let listener = try lan.startListener(
            host: 2, role: "listener", station: "Console", offsetMs: -700, driftPPM: -120)
        let joined = try listener.waitForEvent("tuned in") { $0.name == "tuned_in" }.timeNs
        // In sync from 3 s after joining, as the test above holds every listener to (a loaded CI
        // machine once had this listener's player 23 ms off 2-3 s after joining, its clock right).
        sleep(untilTrue: joined + 4 * Self.second)
        func samples() -> [SyncSample] { lan.measureListener("listener") }
        let settled = samples().within(joined + 3 * Self.second...joined + 4 * Self.second)
        #expect(
            settled.playerCount > 0 && settled.worstPlayerMs < 20, "in sync before the controls: \(settled.summary)")

        // Skip: the new track plays, in sync, within a second.
        var mark = dj.events.count
        let skipAt = realTimeNs()
        dj.send("next")
        let trackChange = try dj.waitForEvent(after: mark, "track change") { $0.string("change") == "track" }
        let newTrack = try #require(trackChange.string("track_id"))
        sleep(untilTrue: skipAt + 1_500_000_000)
        var after = samples().within(skipAt...skipAt + 1_500_000_000)
        let firstInSync = after.first { $0.line.trackID == newTrack && ($0.playerErrorMs.map(abs) ?? .infinity) < 20 }
        #expect(firstInSync.map { $0.trueTimeNs - skipAt < Self.second } == true, "skip: \(after.summary)")
        var late = after.within(skipAt + Self.second...skipAt + 1_500_000_000)
        #expect(!late.isEmpty && late.allSatisfy { $0.line.trackID == newTrack }, "skip: the listener follows")
        #expect(late.playerCount >= late.count * 9 / 10 && late.worstPlayerMs < 20, "after the skip: \(late.summary)")

        // Pause: the player stands still where the station stopped.
        mark = dj.events.count
        let pauseAt = realTimeNs()
        dj.send("pause")
        try dj.waitForEvent(after: mark, "paused") { $0.string("change") == "paused" }
        sleep(untilTrue: pauseAt + 1_800_000_000)
        late = samples().within(pauseAt + Self.second...pauseAt + 1_800_000_000)
        #expect(!late.isEmpty && late.allSatisfy { $0.line.paused }, "pause reaches the listener")
        let still = late.compactMap(\.line.playerPositionMs)
        #expect(still.count >= late.count * 9 / 10, "a paused player still reports its position")
        #expect((still.max() ?? 0) - (still.min() ?? .infinity) < 1, "a paused player stands still: \(still)")
        #expect(late.worstPlayerMs < 20, "paused where the station paused: \(late.summary)")

        // Resume: it moves again, in sync.
        mark = dj.events.count
        let resumeAt = realTimeNs()
        dj.send("resume")
        try dj.waitForEvent(after: mark, "resumed") { $0.string("change") == "resumed" }
        sleep(untilTrue: resumeAt + 2 * Self.second)
        late = samples().within(resumeAt + Self.second...resumeAt + 2 * Self.second)
        #expect(!late.isEmpty && late.allSatisfy { !$0.line.paused }, "resume reaches the listener")
        #expect(late.playerCount >= late.count * 9 / 10 && late.worstPlayerMs < 20, "after resuming: \(late.summary)")
        let moving = late.filter { $0.line.playerPositionMs != nil }
        if let first = moving.first, let last = moving.last, last.trueTimeNs - first.trueTimeNs > 500_000_000 {
            let advanced = last.line.playerPositionMs! - first.line.playerPositionMs!
            let elapsed = Double(last.trueTimeNs - first.trueTimeNs) / 1e6
            #expect(abs(advanced - elapsed) < 20, "the player advances with the clock: \(advanced) ms in \(elapsed) ms")
        } else {
            Issue.record("too few player positions after resuming: \(late.summary)")
        }

        // Seek: the player lands near 12 s within a second.
        mark = dj.events.count
        let seekAt = realTimeNs()
        dj.send("seek 12")
        try dj.waitForEvent(after: mark, "seek") { $0.string("change") == "seek" }
        sleep(untilTrue: seekAt + 1_500_000_000)
        after = samples().within(seekAt...seekAt + 1_500_000_000)
        let landed = after.first { sample in
            guard let truth = sample.truthMs, let error = sample.playerErrorMs else { return false }
            return (12_000...13_500).contains(truth) && abs(error) < 20
        }
        #expect(landed.map { $0.trueTimeNs - seekAt < Self.second } == true, "seek: \(after.summary)")
        late = after.within(seekAt + Self.second...seekAt + 1_500_000_000)
        #expect(late.playerCount >= late.count * 9 / 10 && late.worstPlayerMs < 20, "after the seek: \(late.summary)")
        #expect(late.compactMap(\.line.playerPositionMs).allSatisfy { (12_900...13_700).contains($0) }, "at 12 s + 1 s")
        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Without libmpv a listener says so in one sentence with the fix, from the player's thread, and exits")
    func missingLibmpvIsReportedFromTheBackgroundLoad() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Unplugged")
        defer { withExtendedLifetime(dj) {} }
        // libmpv is loaded on the player's own thread while the node tunes in (docs/MEDIA.md). Here
        // it is an empty file, in a mount namespace of this command's own (private propagation:
        // the machine's file is untouched), as on a machine where the library is broken or gone.
        let library = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libmpv.so.2").resolvingSymlinksInPath().path
        try #require(FileManager.default.fileExists(atPath: library), "libmpv2 is installed")
        let listen = try lan.run(
            host: 2,
            [
                "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind /dev/null \(library) && exec \(Testbed.partyradioBinary) listen Unplugged "
                    + "--audio-driver null --state-dir \(lan.stateDir("listener"))",
            ], timeout: .seconds(30))
        #expect(listen.exit == 1, "\(listen.stderr)")
        // Whether it tuned in first depends on the race with the (here instant) failed load; the
        // failure ends it either way, with the sentence from the player's thread.
        let errors = listen.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        #expect(errors.count == 1, "\(listen.stderr)")
        #expect(errors.first?.hasPrefix("Error: libmpv is not installed: sudo apt install libmpv2 (") == true)
        #expect(errors.first?.hasSuffix("or use --no-audio.") == true)
        // The library on the machine itself is as it was.
        let attributes = try FileManager.default.attributesOfItem(atPath: library)
        #expect((attributes[.size] as? Int ?? 0) > 1_000_000)
    }

    @Test("A listener joining 8 s into a track starts right there")
    func joinMidTrack() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Late", extra: ["--trace", lan.tracePath("dj")])
        let progress = try dj.waitForEvent(timeout: .seconds(15), "8 s into the first track") {
            $0.int("queue_index") == 0 && ($0.int("position_ms") ?? 0) >= 7_000
        }
        let track = try #require(progress.string("track_id"))
        let startedAt = realTimeNs()
        let listener = try lan.startListener(host: 2, role: "listener", station: "Late", offsetMs: 1200, driftPPM: 150)
        // The first player positions it reports: wait for a handful.
        let deadline = startedAt + 6 * Self.second
        var playing: [SyncSample] = []
        while realTimeNs() < deadline && playing.count < 10 {
            Thread.sleep(forTimeInterval: 0.2)
            let samples = lan.measureListener("listener")
            playing = samples.filter { $0.line.playerPositionMs != nil }
        }
        try #require(playing.count >= 10, "the listener plays within 6 s: \(listener.text(.stderr))")
        let first = playing.prefix(10)
        print("late joiner's first player positions: \(first.summary)")
        #expect(first.allSatisfy { $0.line.trackID == track }, "still the first track")
        #expect(first.first!.trueTimeNs - startedAt < 4 * Self.second, "playing within 4 s of starting")
        // Where the station was when the listener started (a listener now plays within a few
        // hundred milliseconds, so it may start before 7.5 s).
        let joinedAtMs = Double(progress.int("position_ms") ?? 7_000)
        #expect(
            first.allSatisfy { ($0.line.playerPositionMs ?? 0) > joinedAtMs },
            "it starts mid-track, not at 0: \(first.map(\.line.playerPositionMs)), joined at \(joinedAtMs) ms")
        #expect(first.playerCount == first.count && first.worstPlayerMs < 20, "its first positions: \(first.summary)")
        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
    }

    @Test("30% loss both ways on the listener's host does not derail its estimate of the DJ clock")
    func lossOnTimeExchange() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Lossy", extra: ["--trace", lan.tracePath("dj")])
        defer { withExtendedLifetime(dj) {} }
        try lan.loss(host: 2, percent: 30, direction: .both)
        let listener = try lan.startListener(
            host: 2, role: "listener", station: "Lossy", offsetMs: -2000, driftPPM: 180, extra: ["--timeout", "20"])
        let joined = try listener.waitForEvent(timeout: .seconds(25), "tuned in") { $0.name == "tuned_in" }.timeNs
        sleep(untilTrue: joined + 12 * Self.second)
        let samples = lan.measureListener("listener")
        let held = samples.within(joined + 5 * Self.second...joined + 12 * Self.second)
        print("sync on the LAN with 30% loss, 5–12 s after joining: \(held.summary)")
        #expect(held.count >= 100, "\(held.count) trace lines in 7 s")
        #expect(held.worstLogicalMs < 1, "from 5 s after joining, under loss: \(held.summary)")
        // The media comes over TCP, which backs off for seconds under this loss (retransmission
        // timeouts of 1.6-3.3 s seen on the DJ's side): the player may not start within the test,
        // and when it does it can starve and fall behind (seen: -20 to -180 ms). That is the
        // network's doing; but a starved player is late, never early.
        let playing = samples.filter { $0.trueTimeNs > joined && $0.line.playerPositionMs != nil }
        if let start = playing.first?.trueTimeNs {
            print("under loss the player started \(Double(start - joined) / 1e9) s after joining: \(playing.summary)")
            let ahead = playing.compactMap(\.playerErrorMs).max() ?? 0
            #expect(ahead < 20, "player under loss: \(playing.summary) \(playing.playerErrors(every: 2))")
        }
        try lan.loss(host: 2, percent: 0)
    }

    @Test("Media over HTTP: whole files and ranges of queued tracks, nothing else; bad library files are skipped")
    func mediaOverHTTP() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Server")
        let nowPlaying = try #require(dj.events.first { $0.name == "state" }?["now_playing"] as? [String: Any])
        let sourceText = try #require(nowPlaying["source"] as? String)
        let source = try #require(URL(string: sourceText))
        let host = try #require(source.host)
        let port = try #require(source.port)
        let djAddress = try lan.ip(host: 1)
        #expect(host == djAddress)
        let title = try #require(nowPlaying["title"] as? String)
        let demo = lan.stateDir("dj") + "/demo-library"
        let demoFiles = try FileManager.default.contentsOfDirectory(atPath: demo).sorted()
        let fileName = try #require(demoFiles.first { $0.hasSuffix("\(title).wav") })
        let file = try Data(contentsOf: URL(fileURLWithPath: demo + "/" + fileName))
        let size = file.count
        let middle = size / 2

        let hostile = [
            "/media/../../etc/passwd", "/media/%2e%2e%2fetc%2fpasswd", "/etc/passwd", "/media/..%2f..%2fetc%2fpasswd",
            "/media/%2e%2e/%2e%2e/etc/passwd", "/media/" + fileName.replacingOccurrences(of: " ", with: "%20"),
            "/demo-library/" + fileName.replacingOccurrences(of: " ", with: "%20"), source.path + "/../../etc/passwd",
            "/media/", "/", "/media/0123456789abcdef",
        ]
        let requests: [HTTPProbe.Request] =
            [
                .init(path: source.path),
                .init(path: source.path, headers: ["Range": "bytes=\(middle)-\(middle + 99)"]),
                .init(path: source.path, headers: ["Range": "bytes=\(middle)-"]),
                .init(path: source.path, headers: ["Range": "bytes=\(size + 10)-\(size + 20)"]),
                .init(method: "POST", path: source.path),
            ] + hostile.map { .init(path: $0) }
        let answers = try HTTPProbe.run(on: lan, host: 2, server: host, port: port, requests)
        try #require(answers.count == requests.count)

        let full = answers[0]
        #expect(full.status == 200)
        #expect(full.contentLength == size && full.bodyLength == size)
        #expect(full.head == file.prefix(32).hex && full.tail == file.suffix(32).hex, "the file's bytes")
        #expect(full.acceptRanges == "bytes")
        #expect(full.contentType?.hasPrefix("audio/") == true, "\(full.contentType ?? "no Content-Type")")
        let range = answers[1]
        #expect(range.status == 206)
        #expect(range.contentRange == "bytes \(middle)-\(middle + 99)/\(size)")
        #expect(range.bodyLength == 100 && range.head == file[middle..<middle + 32].hex)
        #expect(range.tail == file[middle + 68..<middle + 100].hex)
        let rest = answers[2]
        #expect(rest.status == 206)
        #expect(rest.contentRange == "bytes \(middle)-\(size - 1)/\(size)")
        #expect(rest.bodyLength == size - middle && rest.tail == file.suffix(32).hex)
        let unsatisfiable = answers[3]
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.contentRange == "bytes */\(size)")
        #expect(answers[4].status == 405, "POST")
        for (path, answer) in zip(hostile, answers[5...]) {
            // "/" is the station's web page (docs/WEB.md); nothing else outside the tokens is served.
            #expect(answer.status == (path == "/" ? 200 : 404), "\(path)")
            #expect(!answer.leaksPasswd, "\(path)")
        }

        // A library with one good track, a corrupt mp3 and a text file: the DJ starts, says what it
        // skipped, and queues and serves only the good track.
        let library = "/tmp/partyradio-it-\(lan.name)/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let good = try #require(demoFiles.first { $0.hasPrefix("03") })
        try FileManager.default.copyItem(atPath: demo + "/" + good, toPath: library + "/" + good)
        var generator = SystemRandomNumberGenerator()
        try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(
            to: URL(fileURLWithPath: library + "/bad.mp3"))
        try Data("not music\n".utf8).write(to: URL(fileURLWithPath: library + "/notes.txt"))
        let second = try lan.startDJ(host: 2, name: "Shelf", role: "dj2", extra: ["--library", library])
        let events = second.events
        let started = try #require(events.first { $0.name == "station_started" })
        #expect(started.int("queue_length") == 1)
        let warnings = events.filter { $0.name == "warning" }.compactMap { $0.string("message") }
        #expect(warnings.contains { $0.contains("bad.mp3") }, "\(warnings)")
        #expect(!warnings.contains { $0.contains("notes.txt") }, "a non-audio file is no warning: \(warnings)")
        let queued = try #require(events.first { $0.name == "state" }?["now_playing"] as? [String: Any])
        #expect((queued["title"] as? String).map { good.contains($0) } == true, "\(queued)")
        let shelfText = try #require(queued["source"] as? String)
        let shelfSource = try #require(URL(string: shelfText))
        let shelfHost = try #require(shelfSource.host)
        let shelfPort = try #require(shelfSource.port)
        let served = try HTTPProbe.run(
            on: lan, host: 1, server: shelfHost, port: shelfPort, [.init(method: "HEAD", path: shelfSource.path)])
        let goodSize = try FileManager.default.attributesOfItem(atPath: library + "/" + good)[.size] as? Int
        #expect(served.first?.status == 200 && served.first?.contentLength == goodSize)
        second.send("quit")
        #expect(second.wait(timeout: .seconds(5)) == 0)
    }
}

extension Testbed {
    /// Starts `partyradio listen` with mpv's null output, a trace at `tracePath(role)` and a wrong clock.
    func startListener(
        host: Int, role: String, station: String, offsetMs: Int = 0, driftPPM: Int = 0, extra: [String] = []
    ) throws -> TestbedProcess {
        try spawn(
            host: host,
            [
                Testbed.partyradioBinary, "listen", station, "--json-events", "--audio-driver", "null", "--trace",
                tracePath(role), "--clock-offset-ms", String(offsetMs), "--clock-drift-ppm", String(driftPPM),
                "--state-dir", stateDir(role),
            ] + extra)
    }
}

/// HTTP requests sent from a testbed host by python3's http.client, which puts the path on the
/// wire byte for byte (no normalisation of `..` or percent escapes).
enum HTTPProbe {
    struct Request: Encodable {
        var method = "GET"
        var path: String
        var headers: [String: String] = [:]
    }

    struct Answer: Decodable {
        let status: Int
        let contentLength: Int?
        let contentRange: String?
        let contentType: String?
        let acceptRanges: String?
        let bodyLength: Int
        /// The body's first and last 32 bytes, in hex.
        let head: String
        let tail: String
        let leaksPasswd: Bool
    }

    static let script = """
        import http.client, json, sys
        server, port, requests = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
        answers = []
        for request in requests:
            connection = http.client.HTTPConnection(server, port, timeout=10)
            connection.putrequest(request["method"], request["path"], skip_accept_encoding=True)
            for name, value in request["headers"].items():
                connection.putheader(name, value)
            connection.endheaders()
            response = connection.getresponse()
            body = response.read()
            length = response.getheader("Content-Length")
            answers.append({
                "status": response.status, "contentLength": int(length) if length is not None else None,
                "contentRange": response.getheader("Content-Range"), "contentType": response.getheader("Content-Type"),
                "acceptRanges": response.getheader("Accept-Ranges"), "bodyLength": len(body),
                "head": body[:32].hex(), "tail": body[-32:].hex(), "leaksPasswd": b"root:" in body})
            connection.close()
        print(json.dumps(answers))
        """

    /// Sends `requests` one by one from `host` to `server:port` and returns the answers in order.
    static func run(on lan: Testbed, host: Int, server: String, port: Int, _ requests: [Request]) throws -> [Answer] {
        let encoded = String(decoding: try JSONEncoder().encode(requests), as: UTF8.self)
        let result = try lan.run(host: host, ["python3", "-c", script, server, String(port), encoded])
        guard result.exit == 0 else {
            throw TestbedError("python3 http probe failed (exit \(result.exit)): \(result.stderr)")
        }
        return try JSONDecoder().decode([Answer].self, from: Data(result.stdout.utf8))
    }
}

extension DataProtocol {
    fileprivate var hex: String { map { String(format: "%02x", $0) }.joined() }
}
