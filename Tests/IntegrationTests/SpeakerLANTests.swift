import Foundation
import Testing

/// A listener playing into a real sound server (issue 11, items 5 and 8): a PulseAudio of its own
/// on the listener's host, with a null sink, as scripts/bench-speaker.py runs it; its socket in the
/// test's state directory, no network module, no D-Bus.
@Suite(
    "A listener into a real PulseAudio", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: Testbed.hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
struct SpeakerLANTests {
    /// The peak of about 2 s of the null sink's monitor (16-bit samples): what the speaker plays.
    func speakerPeak(_ lan: Testbed, host: Int, env: [String: String]) throws -> Int {
        let file = "\(lan.stateDir("pulse\(host)"))/monitor.raw"
        let result = try lan.run(
            host: host,
            [
                "sh", "-c",
                "timeout 3 parec -d party.monitor --raw --format=s16le --rate=48000 --channels=2 > \(file); true",
            ], env: env, timeout: .seconds(10))
        #expect(result.exit == 0, "parec: \(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        // parec itself takes up to a second to start on a busy machine: at least a quarter of a second.
        #expect(data.count >= 48_000 * 4 / 4, "parec recorded \(data.count) bytes in 3 s")
        return data.withUnsafeBytes { raw in
            raw.bindMemory(to: Int16.self).reduce(0) { max($0, abs(Int($1))) }
        }
    }

    @Test(
        "Sound reaches the sink; a request every 50 ms and timing reports reused by default, the server's 20 ms and a round trip each when the variables say 0"
    )
    func playsIntoPulseAudio() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Speaker")
        defer { dj.kill() }
        var listeners: [TestbedProcess] = []
        var servers: [TestbedProcess] = []
        defer {
            for process in listeners + servers { process.kill() }
        }
        var environments: [Int: [String: String]] = [:]
        for host in [2, 3] {
            let (server, env) = try lan.startSoundServer(host: host)
            servers.append(server)
            environments[host] = env
            // Host 2 plays as shipped: a request every 50 ms (half mpv's buffer), a timing report
            // reused for 250 ms; host 3 leaves both to the server and mpv.
            let request =
                host == 3 ? ["PARTYRADIO_PULSE_REQUEST_MS": "0", "PARTYRADIO_PULSE_TIMING_MS": "0"] : [:]
            listeners.append(
                try lan.spawn(
                    host: host,
                    [
                        Testbed.partyradioBinary, "listen", "Speaker", "--json-events", "--audio-driver", "pulse",
                        "-v", "--state-dir", lan.stateDir("listener\(host)"),
                    ], env: env.merging(request) { $1 }))
        }
        // The numbers in a listener's first `-v` line after `prefix`.
        func numbers(after prefix: String, in listener: TestbedProcess) throws -> [Int] {
            let line = try listener.waitForLine(containing: prefix, timeout: .seconds(30), stream: .stderr)
            let tail = line.split(separator: prefix).last ?? ""
            return tail.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        }
        // "PulseAudio stream: buffer B ms, a request every R ms", as the server granted it.
        let asked = try numbers(after: "PulseAudio stream:", in: listeners[0])
        let serverDefault = try numbers(after: "PulseAudio stream:", in: listeners[1])
        #expect(serverDefault.count == 2 && (99...102).contains(serverDefault[0]), "\(serverDefault)")
        #expect(serverDefault.count == 2 && (19...21).contains(serverDefault[1]), "\(serverDefault)")
        #expect(asked.count == 2 && (99...102).contains(asked[0]), "\(asked)")
        #expect(asked.count == 2 && (48...51).contains(asked[1]), "\(asked)")
        // "PulseAudio timing updates: N sent, M reused", 10 s into playing.
        let reusing = try numbers(after: "PulseAudio timing updates:", in: listeners[0])
        let roundTrips = try numbers(after: "PulseAudio timing updates:", in: listeners[1])
        // mpv asks on every request (20 ms) and more: each a round trip unless reused.
        #expect(roundTrips.count == 2 && roundTrips[0] > 500 && roundTrips[1] == 0, "\(roundTrips)")
        // Reused for 250 ms: about four a second are sent, the rest answered from the last.
        #expect(reusing.count == 2 && reusing[0] > 20 && reusing[1] > reusing[0], "\(reusing)")

        for host in [2, 3] {
            let env = environments[host] ?? [:]
            // mpv's stream is the sink's one input, and it plays (not corked). A start is prepared
            // paused and let go on time, so the stream may still be corked for a moment.
            var inputs = ""
            let deadline = ContinuousClock.now + .seconds(10)
            repeat {
                let listed = try lan.run(host: host, ["pactl", "list", "sink-inputs"], env: env)
                #expect(listed.exit == 0, "pactl: \(listed.stderr)")
                inputs = listed.stdout
                if inputs.contains("Corked: no") { break }
                Thread.sleep(forTimeInterval: 0.2)
            } while ContinuousClock.now < deadline
            #expect(inputs.contains("Corked: no"), "host \(host): \(inputs)")
            // The demo library's tracks are tones: the sink's monitor holds more than silence.
            let peak = try speakerPeak(lan, host: host, env: env)
            #expect(peak > 1_000, "host \(host): the speaker's peak was \(peak) of 32,767")
        }
        for (index, listener) in listeners.enumerated() {
            #expect(listener.isRunning, "listener \(index + 2) stopped: \(listener.text(.stderr).suffix(2_000))")
        }
    }
}
