import Foundation
import PartyRadioCore
import Testing

/// `dj --live` from the sound server (issue 28, docs/LIVE.md "Sources"): a PulseAudio on the DJ's
/// host, as a desktop has; the DJ makes a sink named after the station there, a player (`paplay`)
/// plays a click track into it, and a real `listen` on host 2 plays the station into a PulseAudio of
/// its own. Both sinks' monitors are recorded, each read stamped with CLOCK_REALTIME, the clock both
/// nodes' station time is in on one machine: a click that went into the station's sink at t is heard
/// on host 2 near t + 60 ms (the station's delay) when the capture stamps its frames right.
@Suite(
    "Live stations from the sound server on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
struct LivePulseLANTests {
    static let sink = "partyradio_live_party"
    static let clickMs = 500

    /// A WAV of a 440 Hz tone with a click (a full-scale square burst of 5 ms) every `clickMs`, 48 kHz
    /// stereo, as Tests/Fixtures/live_pcm_writer.py writes into a pipe.
    static func clickTrack(seconds: Int) -> Data {
        let rate = 48_000
        var samples: [Int16] = []
        samples.reserveCapacity(rate * seconds * 2)
        for i in 0..<(rate * seconds) {
            let ms = i * 1000 / rate
            let value: Int16 =
                ms % clickMs < 5
                ? ((i / 24) % 2 == 0 ? 30_000 : -30_000) : Int16(8000 * sin(2 * Double.pi * 440 * Double(i) / 48_000))
            samples += [value, value]
        }
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        let bytes = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + bytes))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(2))
        append(UInt32(rate))
        append(UInt32(rate * 4))
        append(UInt16(4))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(bytes))
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// The clicks in a monitor recording (Tests/Fixtures/monitor_record.py): runs above 16,000, at
    /// least 100 ms apart, on CLOCK_REALTIME by the recorder's sample 0.
    static func clicks(recording path: String, done: String) throws -> [Int64] {
        let fields = done.split(separator: " ")
        let startNs = fields.count >= 3 ? Int64(fields[2]) ?? 0 : 0
        // The monitor's own rate, not 48 kHz: a null sink's clock runs fast (monitor_record.py).
        let rate = fields.count >= 7 ? Double(fields[6]) ?? 48_000 : 48_000
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        var heard: [Int64] = []
        var lastIndex = -4_800
        for (index, sample) in samples.enumerated() where abs(Int(sample)) >= 16_000 {
            if index - lastIndex < 4_800 { continue }
            heard.append(startNs + Int64((Double(index) * 1e9 / rate).rounded()))
            lastIndex = index
        }
        return heard
    }

    /// The sinks on `host`'s sound server.
    static func sinks(_ lan: Testbed, host: Int, env: [String: String]) throws -> [String] {
        let listed = try lan.run(host: host, ["/usr/bin/pactl", "list", "short", "sinks"], env: env)
        return listed.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").dropFirst().first }
            .map(String.init)
    }

    /// The sink of each playback stream on the server, by name.
    static func sinkInputs(_ lan: Testbed, host: Int, env: [String: String]) throws -> [String] {
        let sinks = try lan.run(host: host, ["/usr/bin/pactl", "list", "short", "sinks"], env: env).stdout
        var names: [String: String] = [:]
        for line in sinks.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count >= 2 { names[String(fields[0])] = String(fields[1]) }
        }
        let inputs = try lan.run(host: host, ["/usr/bin/pactl", "list", "short", "sink-inputs"], env: env).stdout
        return inputs.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t")
            return fields.count >= 2 ? names[String(fields[1])] ?? String(fields[1]) : nil
        }
    }

    static func defaultSink(_ lan: Testbed, host: Int, env: [String: String]) throws -> String {
        try lan.run(host: host, ["/usr/bin/pactl", "get-default-sink"], env: env).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("dj --live: a player plays into the station's sink; a listener hears each click at its time + 60 ms")
    func sinkToSpeaker() throws {
        try Self.sinkToSpeaker(label: "live pulse e2e") { lan in try lan.startSoundServer(host: 1) }
    }

    /// Issue 28: "works the same under PipeWire's pulse server". The DJ's host runs PipeWire,
    /// WirePlumber and pipewire-pulse (`startPipeWire`), the listener's PulseAudio as before.
    @Test(
        "dj --live under PipeWire's pulse server: a listener hears each click at its time + 60 ms",
        .enabled(if: hasPipeWire, "PipeWire is not installed (scripts/ensure-packages.sh --for test)"))
    func sinkToSpeakerPipeWire() throws {
        try Self.sinkToSpeaker(label: "live pipewire e2e") { lan in try lan.startPipeWire(host: 1) }
    }

    /// PipeWire's pulse server makes a record stream only once its session manager connected it to its
    /// source: without one libpulse waited 30 s (with SIGINT and SIGTERM held while the DJ starts) and
    /// said only "Timeout". The DJ gives up after `PulseSession.recordTimeoutMs`, says what to start,
    /// and leaves no sink behind.
    @Test(
        "PipeWire without its session manager: dj --live exits 1 within seconds, naming what to start",
        .enabled(if: hasPipeWire, "PipeWire is not installed (scripts/ensure-packages.sh --for test)"))
    func pipeWireWithoutSessionManager() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (sound, env) = try lan.startPipeWire(host: 1, sessionManager: false)
        defer { sound.kill() }
        let started = ContinuousClock.now
        let dj = try lan.run(
            host: 1,
            [
                Testbed.partyradioBinary, "dj", "--name", "Live Party", "--no-audio", "--json-events", "--live",
                "--state-dir", lan.stateDir("dj"),
            ], env: env, timeout: .seconds(45))
        let took = ContinuousClock.now - started
        print("live pipewire without a session manager: exit \(dj.exit) after \(took): \(dj.stderr)")
        #expect(
            dj.exit == 1 && dj.stderr.contains("record stream of \(Self.sink).monitor")
                && dj.stderr.contains("wireplumber"), "\(dj)")
        #expect(!dj.stdout.contains("station_started"))
        // 5 s for the stream, the rest for the start around it; before, 30 s.
        #expect(took < .seconds(12), "the DJ took \(took) to give up")
        #expect(try Self.sinks(lan, host: 1, env: env).filter { $0.hasPrefix("partyradio_") }.isEmpty, "unloaded")

        // doctor says so before a station is tried: the server answers, yet neither a record stream
        // (--live) nor a playback stream (--speaker) ever starts, and the fix names WirePlumber.
        for (flags, name) in [(["--live"], "live"), (["--speaker"], "live output")] {
            let doctor = try lan.run(
                host: 1, [Testbed.partyradioBinary, "doctor", "--no-audio", "--json", "--timeout", "0.5"] + flags,
                env: env, timeout: .seconds(30))
            let checks = (try? JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8))) as? [String: Any]
            let check = (checks?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == name }
            #expect(
                doctor.exit == 1 && check?["ok"] as? Bool == false
                    && (check?["fix"] as? String ?? "").contains("wireplumber"), "\(flags): \(doctor.stdout)")
        }
    }

    /// A player plays a click track into the station's sink on host 1, whose sound server `djServer`
    /// starts; a listener on host 2 (PulseAudio) hears each click at its time + 60 ms.
    static func sinkToSpeaker(
        label: String, djServer: (Testbed) throws -> (TestbedProcess, [String: String])
    ) throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (djSound, djEnv) = try djServer(lan)
        defer { djSound.kill() }
        // doctor: this server starts a record stream (--live) and a playback stream (--speaker).
        let doctor = try lan.run(
            host: 1,
            [Testbed.partyradioBinary, "doctor", "--no-audio", "--json", "--timeout", "0.5", "--live", "--speaker"],
            env: djEnv, timeout: .seconds(30))
        let checks = (try? JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8))) as? [String: Any]
        for name in ["live", "live output"] {
            let check = (checks?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == name }
            #expect(check?["ok"] as? Bool == true, "\(label) doctor \(name): \(doctor.stdout)")
        }
        let dj = try lan.startDJ(host: 1, name: "Live Party", extra: ["--live"], env: djEnv)
        defer { dj.kill() }
        try dj.waitForEvent("started") { $0.name == "station_started" }
        #expect(try Self.sinks(lan, host: 1, env: djEnv).filter { $0 == Self.sink }.count == 1)

        let (sound, env) = try lan.startSoundServer(host: 2)
        defer { sound.kill() }
        let listener = try LiveLANTests.startListener(lan, host: 2, env: env)
        defer { listener.kill() }

        let seconds = 5
        let dir = lan.stateDir("live")
        let track = "\(dir)/clicks.wav"
        try Self.clickTrack(seconds: seconds).write(to: URL(fileURLWithPath: track))
        let recorder = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/monitor_record.py").path
        let source = try lan.spawn(
            host: 1, ["python3", "-u", recorder, String(seconds + 3), "\(dir)/source.raw", "\(Self.sink).monitor"],
            env: djEnv)
        defer { source.kill() }
        let speaker = try lan.spawn(
            host: 2, ["python3", "-u", recorder, String(seconds + 3), "\(dir)/speaker.raw"], env: env)
        defer { speaker.kill() }
        try source.waitForLine(containing: "ready", timeout: .seconds(15))
        try speaker.waitForLine(containing: "ready", timeout: .seconds(15))
        let before = listener.events.count
        let played = try lan.run(
            host: 1, ["/usr/bin/paplay", "-d", Self.sink, track], env: djEnv, timeout: .seconds(30))
        #expect(played.exit == 0, "\(played.stderr)")
        let sourceDone = try source.waitForLine(containing: "done", timeout: .seconds(30))
        let speakerDone = try speaker.waitForLine(containing: "done", timeout: .seconds(30))
        let status = try listener.waitForEvent(after: before, timeout: .seconds(20), "live_status played") {
            $0.name == "live_status" && ($0.int("played") ?? 0) > 0
        }

        // Frames a second from the DJ: the listener's `received` between its reports (every 5 s).
        Thread.sleep(forTimeInterval: 5.5)
        let reports = listener.events.filter { $0.name == "live_status" }
        let rates = zip(reports, reports.dropFirst()).map { a, b in
            Double((b.int("received") ?? 0) - (a.int("received") ?? 0)) / (Double(b.timeNs - a.timeNs) / 1e9)
        }
        print("\(label): frames received a second between reports \(rates.map { ($0 * 10).rounded() / 10 })")
        let sent = try Self.clicks(recording: "\(dir)/source.raw", done: sourceDone)
        let heard = try Self.clicks(recording: "\(dir)/speaker.raw", done: speakerDone)
        // Each click heard against the nearest click that went into the station's sink, + 60 ms.
        let errors = heard.compactMap { at -> Double? in
            sent.map { Double(at - ($0 + 60_000_000)) / 1e6 }.min { abs($0) < abs($1) }
        }
        let written = seconds * 1000 / Self.clickMs
        print(
            "\(label): \(written) clicks played, \(sent.count) in the station's sink, \(heard.count) heard; "
                + "heard - (sink + 60 ms): \(errors.map { ($0 * 10).rounded() / 10 }) ms; live_status played "
                + "\(status.int("played") ?? 0) concealed \(status.int("concealed") ?? 0) late \(status.int("late") ?? 0)"
        )
        #expect(sent.count * 4 >= written * 3, "clicks in the station's sink: \(sent.count) of \(written)")
        // Half at least (under CI's load the output runs dry now and then and loses a click).
        #expect(heard.count * 2 >= written && heard.count <= written + 1, "clicks heard: \(heard.count)")
        // The capture's stamps put each click at the instant it went into the sink: a stamper that left
        // out the stream's latency, or stamped 100 ms off, is outside.
        let onTime = errors.filter { abs($0) <= 40 }.count
        #expect(onTime * 2 >= written, "clicks within 40 ms of their time + 60 ms: \(onTime) (\(errors))")
        dj.kill(signal: SIGINT)
        #expect(dj.wait(timeout: .seconds(10)) != nil)
        #expect(
            try Self.sinks(lan, host: 1, env: djEnv).filter { $0.hasPrefix("partyradio_") }.isEmpty, "the sink unloaded"
        )
    }

    @Test("a sound server that goes away: the station is silent, and on air again when it is back, its sink made again")
    func soundServerRestart() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (first, env) = try lan.startSoundServer(host: 1)
        // Its speakers on: they play on the server's sink `party`, and come back with the server too.
        let dj = try lan.startDJ(host: 1, name: "Live Party", playing: true, extra: ["--live"], env: env)
        defer { dj.kill() }
        try dj.waitForEvent("started") { $0.name == "station_started" }
        let track = "\(lan.stateDir("live"))/clicks.wav"
        try Self.clickTrack(seconds: 1).write(to: URL(fileURLWithPath: track))
        let play = { () throws -> Int32 in
            try lan.run(host: 1, ["/usr/bin/paplay", "-d", Self.sink, track], env: env, timeout: .seconds(30)).exit
        }
        #expect(try play() == 0)
        // The server goes away (as a user's PulseAudio or PipeWire restarting does), and comes back.
        let onAir = dj.events.count
        // The server is setsid's child (startSoundServer): SIGTERM to it, then setsid ends.
        let stopped = try lan.run(host: 1, ["pkill", "-TERM", "-P", String(first.pid), "-x", "pulseaudio"])
        #expect(stopped.exit == 0, "pulseaudio stopped: \(stopped)")
        #expect(first.wait(timeout: .seconds(10)) != nil)
        let gone = try dj.waitForEvent(after: onAir, timeout: .seconds(10), "silent: the server went away") {
            $0.name == "warning" && ($0.string("message") ?? "").contains("silent")
        }
        print("live pulse restart: \(gone.string("message") ?? "")")
        let (second, _) = try lan.startSoundServer(host: 1)
        defer { second.kill() }
        var sinks: [String] = []
        let deadline = ContinuousClock.now + .seconds(15)
        while !sinks.contains(Self.sink) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.3)
            sinks = (try? Self.sinks(lan, host: 1, env: env)) ?? []
        }
        #expect(sinks.contains(Self.sink), "the station's sink made again in the new server: \(sinks)")
        // The null sink's monitor sends (silence) at once: the station is on air again by itself; a
        // player plays into the new sink.
        try dj.waitForEvent(after: onAir, timeout: .seconds(10), "on air again") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("on air again")
        }
        #expect(try play() == 0)
        try dj.waitForEvent(after: onAir, timeout: .seconds(10), "the DJ's speakers again") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("live output plays again")
        }
        var playingOn: [String] = []
        let speakersDeadline = ContinuousClock.now + .seconds(10)
        while playingOn.isEmpty && ContinuousClock.now < speakersDeadline {
            Thread.sleep(forTimeInterval: 0.3)
            playingOn = (try? Self.sinkInputs(lan, host: 1, env: env)) ?? []
        }
        #expect(playingOn == ["party"], "the DJ's speakers play on the new server: \(playingOn)")
        dj.kill(signal: SIGINT)
        #expect(dj.wait(timeout: .seconds(10)) != nil)
        #expect(try Self.sinks(lan, host: 1, env: env).filter { $0.hasPrefix("partyradio_") }.isEmpty, "unloaded")
    }

    @Test("the station's sink: the default while it runs and given back; after kill -9, taken over, not doubled")
    func sinkLifecycle() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // No sound server: a clear error with its fix, before the station goes on air.
        let alone = try lan.run(
            host: 1,
            [
                Testbed.partyradioBinary, "dj", "--name", "Live Party", "--no-audio", "--live", "--state-dir",
                lan.stateDir("alone"),
            ], env: ["PULSE_SERVER": "unix:/nonexistent/native"])
        #expect(
            alone.exit == 1 && alone.stderr.contains("No sound server") && alone.stderr.contains("pipe:"), "\(alone)")
        #expect(!alone.stdout.contains("station_published"))

        let (sound, env) = try lan.startSoundServer(host: 1)
        defer { sound.kill() }
        #expect(try Self.defaultSink(lan, host: 1, env: env) == "party")
        // An unknown source: the error lists the ones there are.
        let unknown = try lan.run(
            host: 1,
            [
                Testbed.partyradioBinary, "dj", "--name", "Live Party", "--no-audio", "--live", "pulse:line_in",
                "--state-dir", lan.stateDir("unknown"),
            ], env: env)
        #expect(unknown.exit == 1 && unknown.stderr.contains("party.monitor"), "\(unknown.stderr)")
        let doctor = try lan.run(
            host: 1, [Testbed.partyradioBinary, "doctor", "--no-audio", "--live", "pulse:line_in", "--json"], env: env)
        #expect(doctor.stdout.contains("party.monitor") && doctor.stdout.contains("\"live\""), "\(doctor.stdout)")
        // doctor --speaker: a live station plays here, into the server's default output; with no
        // server, it fails and says what to start.
        let speakerCheck = try lan.run(
            host: 1, [Testbed.partyradioBinary, "doctor", "--no-audio", "--speaker", "--json", "--timeout", "0.5"],
            env: env)
        let checks = (try? JSONSerialization.jsonObject(with: Data(speakerCheck.stdout.utf8))) as? [String: Any]
        let outputCheck = (checks?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "live output" }
        #expect(
            outputCheck?["ok"] as? Bool == true && (outputCheck?["detail"] as? String ?? "").contains("party"),
            "\(speakerCheck.stdout)")
        let noServer = try lan.run(
            host: 1, [Testbed.partyradioBinary, "doctor", "--no-audio", "--speaker", "--json", "--timeout", "0.5"],
            env: ["PULSE_SERVER": "unix:/nonexistent/native"])
        let failed = (try? JSONSerialization.jsonObject(with: Data(noServer.stdout.utf8))) as? [String: Any]
        let failedCheck = (failed?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "live output" }
        #expect(
            noServer.exit == 1 && failedCheck?["ok"] as? Bool == false && failedCheck?["fix"] is String,
            "\(noServer.stdout)")

        // --live-default-output: the station's sink is the default while the station runs, then given back.
        // Its speakers on (no --no-audio): they play on the sink that was the default, never into the
        // station's own sink, which it records (a loop).
        let first = try lan.startDJ(
            host: 1, name: "Live Party", playing: true, extra: ["--live", "--live-default-output"], env: env)
        try first.waitForEvent("started") { $0.name == "station_started" }
        #expect(try Self.defaultSink(lan, host: 1, env: env) == Self.sink)
        var playingOn: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while playingOn.isEmpty && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.3)
            playingOn = try Self.sinkInputs(lan, host: 1, env: env)
        }
        #expect(playingOn == ["party"], "the DJ's speakers play on: \(playingOn)")
        first.kill(signal: SIGINT)
        #expect(first.wait(timeout: .seconds(10)) != nil)
        #expect(try Self.defaultSink(lan, host: 1, env: env) == "party", "the previous default given back")
        #expect(!(try Self.sinks(lan, host: 1, env: env).contains(Self.sink)), "the sink unloaded")

        // kill -9 leaves the sink behind, and with --live-default-output the default pointing at it;
        // the next run takes the sink over instead of making a second one, and gives the default
        // back to the sink it was made beside, where its speakers play.
        let killed = try lan.startDJ(
            host: 1, name: "Live Party", extra: ["--live", "--live-default-output"], env: env)
        try killed.waitForEvent("started") { $0.name == "station_started" }
        killed.kill(signal: SIGKILL)
        _ = killed.wait(timeout: .seconds(10))
        #expect(try Self.sinks(lan, host: 1, env: env).filter { $0.hasPrefix(Self.sink) } == [Self.sink])
        #expect(try Self.defaultSink(lan, host: 1, env: env) == Self.sink, "left the default by kill -9")
        let again = try lan.startDJ(host: 1, name: "Live Party", playing: true, extra: ["--live"], env: env)
        let takeover = try again.waitForEvent("taken over") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("Took over")
        }
        #expect(
            (takeover.string("message") ?? "").contains("Gave the default output back to party"),
            "\(takeover.string("message") ?? "")")
        #expect(try Self.defaultSink(lan, host: 1, env: env) == "party", "the default given back after kill -9")
        #expect(try Self.sinks(lan, host: 1, env: env).filter { $0.hasPrefix(Self.sink) } == [Self.sink])
        var speakers: [String] = []
        let speakersDeadline = ContinuousClock.now + .seconds(10)
        while speakers.isEmpty && ContinuousClock.now < speakersDeadline {
            Thread.sleep(forTimeInterval: 0.3)
            speakers = try Self.sinkInputs(lan, host: 1, env: env)
        }
        #expect(speakers == ["party"], "after a takeover the DJ's speakers play on: \(speakers)")
        again.kill(signal: SIGTERM)
        #expect(again.wait(timeout: .seconds(10)) != nil)
        #expect(try Self.sinks(lan, host: 1, env: env).filter { $0.hasPrefix("partyradio_") }.isEmpty)
    }
}
