import Foundation
import Testing

/// A speaker the DJ sets (issue 29; docs/SPEAKERS.md), on the namespace LAN with a real sound
/// server: the DJ of the generated demo library on host 1, `partyradio speaker` on host 2 playing
/// into a PulseAudio null sink, recorded from its monitor. The rules, restated:
/// - `speaker Kitchen volume 20` on the DJ's stdin lowers the level at the sink: libmpv's volume
///   is cubic, so 20 % plays at under 1 % of the power; the test asks for an RMS under half of
///   what volume 100 gave;
/// - `mute on` (for its room) silences it: an RMS under a tenth of the level at volume 20 just before;
/// - a control under another key (a forged datagram to the station's group, with the station's
///   ID or another's) changes nothing and is counted in the speaker's drops;
/// - a speaker killed and started again plays at the volume the DJ set;
/// - a DJ that goes off air (a goodbye) and comes back finds its speaker waiting, which plays again.
@Suite(
    "Speakers the DJ sets, heard at a PulseAudio sink", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
struct SpeakerControlLANTests {
    /// The RMS of about 3 s of the null sink's monitor (16-bit samples).
    func sinkRMS(_ lan: Testbed, host: Int, env: [String: String], label: String) throws -> Double {
        let file = "\(lan.stateDir("pulse\(host)"))/\(label).raw"
        let result = try lan.run(
            host: host,
            [
                "sh", "-c",
                "timeout 3 parec -d party.monitor --raw --format=s16le --rate=48000 --channels=2 > \(file); true",
            ], env: env, timeout: .seconds(10))
        #expect(result.exit == 0, "parec: \(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(data.count >= 48_000 * 4 / 4, "parec recorded \(data.count) bytes in 3 s")
        let sum = data.withUnsafeBytes { raw in
            raw.bindMemory(to: Int16.self).reduce(0.0) { $0 + Double($1) * Double($1) }
        }
        return (sum / Double(max(1, data.count / 2))).squareRoot()
    }

    /// Starts the speaker on `host` into its sound server.
    func startSpeaker(_ lan: Testbed, host: Int, env: [String: String]) throws -> TestbedProcess {
        try lan.spawn(
            host: host,
            [
                Testbed.partyradioBinary, "speaker", "--name", "Kitchen", "--room", "Downstairs", "--station", "Party",
                "--json-events", "--audio-driver", "pulse", "-v", "--state-dir", lan.stateDir("speaker\(host)"),
            ], env: env)
    }

    /// Waits until the sink's one input plays (not corked).
    func waitForPlaying(_ lan: Testbed, host: Int, env: [String: String]) throws {
        var inputs = ""
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            inputs = try lan.run(host: host, ["pactl", "list", "sink-inputs"], env: env).stdout
            if inputs.contains("Corked: no") { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while ContinuousClock.now < deadline
        #expect(inputs.contains("Corked: no"), "host \(host): \(inputs)")
        Thread.sleep(forTimeInterval: 1)  // past the start's fade
    }

    /// The DJ's stdin line `line`, and the speaker's `speaker_settings` that shows it took it.
    func set(_ dj: TestbedProcess, _ line: String, on speaker: TestbedProcess, until shows: @escaping (Event) -> Bool)
        throws
    {
        let mark = speaker.events.count
        dj.send(line)
        try speaker.waitForEvent(after: mark, line) { $0.name == "speaker_settings" && shows($0) }
    }

    /// The sink's level after a muting line: under a tenth of `before` (the level just before).
    func mutedRMS(
        _ lan: Testbed, _ dj: TestbedProcess, _ line: String, on speaker: TestbedProcess, env: [String: String],
        before: Double, label: String
    ) throws -> Double {
        try set(dj, line, on: speaker) { ($0["muted"] as? Bool) == true }
        Thread.sleep(forTimeInterval: 0.3)
        let muted = try sinkRMS(lan, host: 2, env: env, label: label)
        #expect(muted < before / 10, "muted: RMS \(muted), just before: \(before)")
        return muted
    }

    /// The DJ's last `speakers` event with Kitchen in it, from index `after` on, matching `matches`.
    func kitchen(_ dj: TestbedProcess, after: Int = 0, _ what: String, where matches: @escaping ([String: Any]) -> Bool)
        throws -> [String: Any]
    {
        let event = try dj.waitForEvent(after: after, timeout: .seconds(20), what) { event in
            guard event.name == "speakers", let list = event["speakers"] as? [[String: Any]] else { return false }
            return list.contains { ($0["name"] as? String) == "Kitchen" && matches($0) }
        }
        let list = event["speakers"] as? [[String: Any]] ?? []
        return list.first { ($0["name"] as? String) == "Kitchen" } ?? [:]
    }

    @Test(
        "volume 20 lowers the level at the sink, mute silences it, another key's control changes nothing, a restart keeps the volume"
    )
    func djSetsASpeaker() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Party")
        defer { dj.kill() }
        let started = try dj.waitForEvent("station_started") { $0.name == "station_started" }
        let stationID = try #require(started.string("id"))
        let group = try #require(started.string("group")).split(separator: ":")
        let (server, env) = try lan.startSoundServer(host: 2)
        defer { server.kill() }
        var speaker = try startSpeaker(lan, host: 2, env: env)
        defer { speaker.kill() }

        // The DJ lists it apart from its guests: a speaker, playing, at full volume; no listener joined.
        let listed = try kitchen(dj, "Kitchen playing") { ($0["playing"] as? Bool) == true }
        #expect(listed["room"] as? String == "Downstairs" && listed["volume"] as? Int == 100, "\(listed)")
        #expect(listed["host"] as? String == (try lan.ip(host: 2)), "\(listed)")
        #expect(!dj.events.contains { $0.name == "listener_joined" }, "a speaker counted as a guest")
        try waitForPlaying(lan, host: 2, env: env)
        let full = try sinkRMS(lan, host: 2, env: env, label: "full")
        #expect(full > 300, "the speaker at volume 100 played at RMS \(full)")

        // `partyradio speakers --json` on the DJ's machine lists it, as the DJ's events do.
        let djState = lan.stateDir("dj")
        let asked = try lan.run(host: 1, [Testbed.partyradioBinary, "speakers", "--json", "--state-dir", djState])
        let answer = try JSONSerialization.jsonObject(with: Data(asked.stdout.utf8)) as? [String: Any]
        let rows = answer?["speakers"] as? [[String: Any]] ?? []
        #expect(
            asked.exit == 0 && rows.count == 1 && rows.first?["name"] as? String == "Kitchen"
                && rows.first?["room"] as? String == "Downstairs" && rows.first?["playing"] as? Bool == true,
            "speakers --json: \(asked)")
        let plain = try lan.run(host: 1, [Testbed.partyradioBinary, "speakers", "--state-dir", djState])
        #expect(plain.stdout.hasPrefix("Kitchen (Downstairs) at \(try lan.ip(host: 2)): volume 100"), "\(plain)")

        // Volume 20 with `partyradio speaker-set`: the speaker says so, the DJ shows it, the sink is quieter.
        var mark = speaker.events.count
        let setVolume = try lan.run(
            host: 1, [Testbed.partyradioBinary, "speaker-set", "Kitchen", "volume", "20", "--state-dir", djState])
        #expect(
            setVolume.exit == 0 && setVolume.stdout.contains("Speaker Kitchen: volume 20."), "speaker-set: \(setVolume)"
        )
        try speaker.waitForEvent(after: mark, "speaker_settings volume 20") {
            $0.name == "speaker_settings" && $0.int("volume") == 20
        }
        _ = try kitchen(dj, "Kitchen at 20") { ($0["volume"] as? Int) == 20 }
        // A name that is no speaker, a value out of range, another state directory: clear answers.
        let nobody = try lan.run(
            host: 1, [Testbed.partyradioBinary, "speaker-set", "Attic", "volume", "5", "--state-dir", djState])
        #expect(nobody.exit == 1 && nobody.stderr.contains("No speaker or room is called 'Attic'"), "\(nobody)")
        let tooFar = try lan.run(
            host: 1, [Testbed.partyradioBinary, "speaker-set", "Kitchen", "delay", "-900", "--state-dir", djState])
        #expect(tooFar.exit == 2 && tooFar.stderr.contains("-500 to +500 ms; -900 is out of range"), "\(tooFar)")
        let elsewhere = try lan.run(
            host: 1, [Testbed.partyradioBinary, "speakers", "--state-dir", lan.stateDir("nodj")])
        #expect(elsewhere.exit == 1 && elsewhere.stderr.contains("No DJ runs with the state directory"), "\(elsewhere)")
        Thread.sleep(forTimeInterval: 0.3)
        let low = try sinkRMS(lan, host: 2, env: env, label: "low")
        #expect(low < full / 2, "volume 20: RMS \(low), volume 100: \(full)")

        // Muted (its room): silence.
        let muted = try mutedRMS(
            lan, dj, "speaker Downstairs mute on", on: speaker, env: env, before: low, label: "muted")
        try set(dj, "speaker Kitchen mute off", on: speaker) { ($0["muted"] as? Bool) == false }

        // Out of range and unknown: refused with the range, nothing sent.
        dj.send("speaker Kitchen volume 150")
        dj.send("speaker Attic volume 5")
        try dj.waitForEvent("out of range") {
            $0.name == "warning" && ($0.string("message") ?? "").contains("0 to 100; 150 is out of range")
        }
        try dj.waitForEvent("unknown speaker") {
            $0.name == "warning" && ($0.string("message") ?? "").contains("No speaker or room is called 'Attic'")
        }

        // Controls signed by another key (under the station's ID, and under another station's), to
        // the group from host 3: the speaker's settings do not move, and its drops count them.
        mark = speaker.events.count
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/forge_speaker_control.py").path
        let sent = try lan.run(
            host: 3, ["/usr/bin/python3", script, stationID, String(group[0]), String(group[1]), "Downstairs"])
        #expect(sent.exit == 0, "forge: \(sent.stderr)")
        Thread.sleep(forTimeInterval: 1)
        #expect(
            !speaker.events[mark...].contains { $0.name == "speaker_settings" }, "a forged control changed the speaker")

        // Killed (SIGTERM: it says what it dropped) and started again: the volume holds.
        speaker.kill()
        _ = speaker.wait(timeout: .seconds(10))
        let stopped = try #require(
            speaker.events.last { $0.name == "listener_stopped" }, "\(speaker.text(.stdout).suffix(2000))")
        let dropped = stopped["dropped"] as? [String: Any] ?? [:]
        #expect((dropped["bad_signature"] as? Int ?? 0) >= 3, "\(dropped)")
        #expect((dropped["wrong_station"] as? Int ?? 0) >= 3, "\(dropped)")
        speaker = try startSpeaker(lan, host: 2, env: env)
        let kept = try speaker.waitForEvent("kept settings") { $0.name == "speaker_settings" }
        #expect(kept.int("volume") == 20 && (kept["muted"] as? Bool) == false, "\(kept.fields)")
        try waitForPlaying(lan, host: 2, env: env)
        let restarted = try sinkRMS(lan, host: 2, env: env, label: "restarted")
        #expect(restarted < full / 2, "after a restart: RMS \(restarted), volume 100: \(full)")
        print("speaker LAN: sink RMS at volume 100 \(full), 20 \(low), muted \(muted), 20 after a restart \(restarted)")

        // The DJ goes off air (a goodbye) and comes back: the speaker waits, and plays again at 20.
        mark = speaker.events.count
        dj.kill()
        _ = dj.wait(timeout: .seconds(10))
        // Its link went with it: the commands say no DJ runs there.
        let gone = try lan.run(host: 1, [Testbed.partyradioBinary, "speakers", "--state-dir", djState])
        #expect(gone.exit == 1 && gone.stderr.contains("No DJ runs with the state directory"), "\(gone)")
        try speaker.waitForEvent(after: mark, "off air") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("waiting for it to come back")
        }
        Thread.sleep(forTimeInterval: 2)
        #expect(speaker.isRunning, "the speaker ended with its DJ: \(speaker.text(.stderr).suffix(2000))")
        let again = try lan.startDJ(host: 1, name: "Party")
        defer { again.kill() }
        try speaker.waitForEvent(after: mark, timeout: .seconds(30), "tuned in again") { $0.name == "tuned_in" }
        _ = try kitchen(again, "Kitchen back at 20") {
            ($0["volume"] as? Int) == 20 && ($0["playing"] as? Bool) == true
        }
        try waitForPlaying(lan, host: 2, env: env)
        let back = try sinkRMS(lan, host: 2, env: env, label: "back")
        #expect(back > 0 && back < full / 2, "after the DJ came back: RMS \(back), volume 100: \(full)")
        #expect(speaker.isRunning && again.isRunning, "\(speaker.text(.stderr).suffix(2000))")
    }

    /// A live station (a PCM pipe on the DJ's host): the speaker's live output takes the volume on
    /// libmpv's curve (``LiveGain``) and silence when muted, as a file station's player does.
    @Test("on a live station too: volume 20 lowers the level at the sink, mute silences it")
    func liveStation() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let fifo = "\(lan.stateDir("live"))/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let dj = try lan.startDJ(host: 1, name: "Party", extra: ["--live", "pipe:\(fifo)?sampleformat=48000:16:2"])
        defer { dj.kill() }
        let writer = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/live_pcm_writer.py").path
        let source = try lan.spawn(host: 1, ["python3", "-u", writer, fifo, "40", "500"])
        defer { source.kill() }
        let (server, env) = try lan.startSoundServer(host: 2)
        defer { server.kill() }
        let speaker = try startSpeaker(lan, host: 2, env: env)
        defer { speaker.kill() }
        _ = try kitchen(dj, "Kitchen playing") { ($0["playing"] as? Bool) == true }
        try waitForPlaying(lan, host: 2, env: env)
        let full = try sinkRMS(lan, host: 2, env: env, label: "live-full")
        #expect(full > 300, "the speaker at volume 100 played the live station at RMS \(full)")
        try set(dj, "speaker Kitchen volume 20", on: speaker) { $0.int("volume") == 20 }
        Thread.sleep(forTimeInterval: 0.3)
        let low = try sinkRMS(lan, host: 2, env: env, label: "live-low")
        #expect(low < full / 2, "volume 20: RMS \(low), volume 100: \(full)")
        let muted = try mutedRMS(
            lan, dj, "speaker Kitchen mute on", on: speaker, env: env, before: low, label: "live-muted")
        print("speaker LAN, live station: sink RMS at volume 100 \(full), 20 \(low), muted \(muted)")

        // The DJ sees the speaker's sync error while it plays (a live output places its sound within
        // a few milliseconds), and its output failing (its sound server gone) with why, and over
        // once the server is back.
        let synced = try kitchen(dj, "Kitchen's sync error") { $0["sync_error_ms"] is Double }
        let syncMs = synced["sync_error_ms"] as? Double ?? .infinity
        #expect(abs(syncMs) < 20, "the speaker's sync error: \(synced)")
        var mark = dj.events.count
        let stopped = try lan.run(host: 2, ["pkill", "-TERM", "-P", String(server.pid), "-x", "pulseaudio"])
        #expect(stopped.exit == 0, "pulseaudio stopped: \(stopped)")
        let failing = try kitchen(dj, after: mark, "Kitchen's output failing") {
            ($0["trouble"] as? String ?? "").contains("live output")
        }
        #expect(failing["sync_error_ms"] is NSNull, "no sync error while it fails: \(failing)")
        mark = dj.events.count
        try? FileManager.default.removeItem(atPath: "\(lan.stateDir("pulse2"))/native")
        let (again, _) = try lan.startSoundServer(host: 2)
        defer { again.kill() }
        _ = try kitchen(dj, after: mark, "Kitchen plays again") { ($0["trouble"] as? String) == "" }
        print("speaker LAN, live station: sync error \(syncMs) ms; trouble said: \(failing["trouble"] ?? "")")
    }
}
