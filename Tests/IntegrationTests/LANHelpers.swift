import Foundation
import Testing

/// PulseAudio's daemon and its client tools (parec, pactl).
let hasPulseAudio = ["/usr/bin/pulseaudio", "/usr/bin/parec", "/usr/bin/pactl"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// PipeWire with its pulse server and its session manager, WirePlumber, and the pulse client tools.
let hasPipeWire = ["/usr/bin/pipewire", "/usr/bin/pipewire-pulse", "/usr/bin/wireplumber", "/usr/bin/pactl"]
    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

/// Helpers for driving the real `partyradio` binary on testbed hosts.
extension Testbed {
    /// A fresh state directory for one node of this testbed (keys live there).
    func stateDir(_ role: String) -> String {
        let path = "/tmp/partyradio-it-\(name)/\(role)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts a DJ with `--json-events` and waits until it is announced.
    /// - Parameter playing: play through mpv's null audio output (`--audio-driver null`) instead of
    ///   `--no-audio`, for tests of the DJ's own player.
    func startDJ(
        host: Int, name: String, role: String = "dj", playing: Bool = false, extra: [String] = [],
        env: [String: String] = [:]
    ) throws -> TestbedProcess {
        let audio = playing ? ["--audio-driver", "null"] : ["--no-audio"]
        let dj = try spawn(
            host: host,
            [Testbed.partyradioBinary, "dj", "--name", name, "--json-events"] + audio + ["--state-dir", stateDir(role)]
                + extra, env: env, stdin: true)
        try dj.waitForLine(containing: "\"station_published\"", timeout: .seconds(15))
        return dj
    }

    /// The DJ's web page as its `web_page` event gives it: the guests' link and the DJ's own.
    func pageLinks(_ dj: TestbedProcess) throws -> (url: String, djURL: String) {
        let page = try dj.waitForEvent("web_page") { $0.name == "web_page" }
        guard let url = page.string("url"), let djURL = page.string("dj_url") else {
            throw TestbedError("web_page without its links: \(page.fields)")
        }
        return (url, djURL)
    }

    /// Runs a one-shot partyradio command on a host.
    func partyradio(host: Int, _ args: [String], role: String, timeout: Duration = .seconds(30)) throws -> (
        exit: Int32, stdout: String, stderr: String
    ) {
        try run(host: host, [Testbed.partyradioBinary] + args + ["--state-dir", stateDir(role)], timeout: timeout)
    }

    /// Starts the catalog fixture server on `host`, serving previews on that host's LAN address as
    /// Apple's CDN serves them (Tests/Fixtures/catalog_fixture_server.py `--previews`, and
    /// `options`): the process, to keep alive, and the server's origin (`http://ADDRESS:PORT`).
    func startPreviewServer(host: Int, options: [String] = []) throws -> (TestbedProcess, String) {
        let address = try ip(host: host)
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/catalog_fixture_server.py").path
        let fixture = try spawn(host: host, ["python3", script, "0", "--previews", address] + options, stdin: true)
        let port = try fixture.waitForLine(containing: "PORT ", timeout: .seconds(10)).split(separator: " ").last ?? ""
        return (fixture, "http://\(address):\(port)")
    }

    /// Starts PulseAudio on `host` with a null sink `party` (48 kHz stereo), as a desktop's sound
    /// server: its socket in the host's state directory, no network module, no D-Bus. Returns the
    /// process and the environment that points a client (mpv's `pulse` output, parec) at it.
    /// - Parameter systemMode: run it as a machine's system-wide server instead (`pulseaudio --system`:
    ///   it drops to the user `pulse` and lets in only the group `pulse-access`, root included), its
    ///   runtime and state folders (`/run/pulse`, `/var/lib/pulse`) tmpfs of its own mount namespace,
    ///   its socket still in the host's state directory.
    func startSoundServer(host: Int, systemMode: Bool = false) throws -> (TestbedProcess, [String: String]) {
        let home = stateDir("pulse\(host)")
        let socket = "\(home)/native"
        let sink = "-L 'module-null-sink sink_name=party rate=48000 channels=2' "
        let daemon =
            systemMode
            ? "chown pulse:pulse \(home) && exec setsid -w unshare -m --propagation private sh -c \"mkdir -p /run/pulse /var/lib/pulse "
                + "&& mount -t tmpfs tmpfs /run/pulse && mount -t tmpfs tmpfs /var/lib/pulse "
                + "&& chown pulse:pulse /run/pulse /var/lib/pulse && exec /usr/bin/pulseaudio --system -n --daemonize=no "
                + "--use-pid-file=no --disallow-exit --log-target=stderr \(sink)"
                + "-L 'module-native-protocol-unix socket=\(socket)'\""
            : "exec setsid -w /usr/bin/env HOME=\(home) XDG_RUNTIME_DIR=\(home) /usr/bin/pulseaudio -n --daemonize=no "
                + "--exit-idle-time=-1 --use-pid-file=no --disallow-exit --log-target=stderr \(sink)"
                + "-L 'module-native-protocol-unix socket=\(socket) auth-anonymous=1'"
        // In a session of its own, its output in a file: started straight under the test process,
        // no later `run` on its host returned (seen; scripts/bench-speaker.py starts it the same way).
        // `setsid -w`: where the shell leads its process group setsid forks, and then waits, so the
        // process stays PulseAudio's for as long as it runs (the testbed's teardown ends both).
        let server = try spawn(host: host, ["sh", "-c", daemon + " > \(home)/pulse.log 2>&1"])
        let deadline = ContinuousClock.now + .seconds(15)
        while !FileManager.default.fileExists(atPath: socket) {
            guard ContinuousClock.now < deadline, server.isRunning else {
                let log = (try? String(contentsOfFile: "\(home)/pulse.log", encoding: .utf8)) ?? ""
                throw TestbedError(
                    "PulseAudio did not start on host \(host): \(server.text(.stderr)) \(log.suffix(2_000))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return (server, ["PULSE_SERVER": "unix:\(socket)"])
    }

    /// Starts PipeWire on `host` as a desktop runs it: `pipewire`, its session manager WirePlumber
    /// (unless `sessionManager` is false) and its pulse server `pipewire-pulse`, with a null sink `party`
    /// (48 kHz stereo) made through the pulse server as `startSoundServer` has. Their runtime, config and
    /// state directories are the host's state directory, so nothing is shared with the machine's own.
    /// WirePlumber 0.4 quits when a monitor it loads cannot start: on a testbed host there is no
    /// systemd-logind (its bluez monitor's logind module) and no D-Bus session bus (ALSA's device
    /// reservation, the Flatpak portal), so those are off in its user config (a host has no Bluetooth
    /// and no sound card for them anyway). Returns the process (setsid, whose shell waits for all
    /// three) and the environment that points a pulse client at the pulse server.
    func startPipeWire(host: Int, sessionManager: Bool = true) throws -> (TestbedProcess, [String: String]) {
        let home = stateDir("pipewire\(host)")
        let socket = "\(home)/pulse/native"
        let config = "\(home)/config/wireplumber"
        let settings = [
            "main.lua.d": "alsa_monitor.enabled = false\n"
                + "default_access.properties[\"enable-flatpak-portal\"] = false\n",
            "bluetooth.lua.d": "bluez_monitor.enabled = false\n",
        ]
        for (folder, text) in settings {
            try FileManager.default.createDirectory(atPath: "\(config)/\(folder)", withIntermediateDirectories: true)
            try text.write(toFile: "\(config)/\(folder)/80-partyradio-tests.lua", atomically: true, encoding: .utf8)
        }
        // PipeWire first; WirePlumber and the pulse server connect to its socket.
        let manager = sessionManager ? "/usr/bin/wireplumber & " : ""
        let server = try spawn(
            host: host,
            [
                "sh", "-c",
                "exec setsid -w /usr/bin/env HOME=\(home) XDG_RUNTIME_DIR=\(home) PIPEWIRE_RUNTIME_DIR=\(home) "
                    + "XDG_CONFIG_HOME=\(home)/config XDG_STATE_HOME=\(home)/state sh -c '/usr/bin/pipewire & "
                    + "while [ ! -S \(home)/pipewire-0 ]; do sleep 0.05; done; \(manager)"
                    + "/usr/bin/pipewire-pulse & wait' > \(home)/pipewire.log 2>&1",
            ])
        let env = ["PULSE_SERVER": "unix:\(socket)"]
        let deadline = ContinuousClock.now + .seconds(15)
        while !FileManager.default.fileExists(atPath: socket) {
            guard ContinuousClock.now < deadline, server.isRunning else {
                let log = (try? String(contentsOfFile: "\(home)/pipewire.log", encoding: .utf8)) ?? ""
                throw TestbedError(
                    "PipeWire did not start on host \(host): \(server.text(.stderr)) \(log.suffix(2_000))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let sink = try run(
            host: host,
            ["/usr/bin/pactl", "load-module", "module-null-sink", "sink_name=party", "rate=48000", "channels=2"],
            env: env)
        guard sink.exit == 0 else {
            throw TestbedError("PipeWire's pulse server made no sink on host \(host): \(sink)")
        }
        return (server, env)
    }

    func cleanStateDirs() { try? FileManager.default.removeItem(atPath: "/tmp/partyradio-it-\(name)") }
}

/// One `--json-events` line, parsed.
struct Event {
    let fields: [String: Any]
    var name: String { fields["event"] as? String ?? "" }
    var timeNs: Int64 { (fields["time_ns"] as? NSNumber)?.int64Value ?? 0 }
    subscript(key: String) -> Any? { fields[key] }
    func int(_ key: String) -> Int? { (fields[key] as? NSNumber)?.intValue }
    func string(_ key: String) -> String? { fields[key] as? String }

    init?(line: String) {
        guard let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        fields = object
    }
}

extension TestbedProcess {
    /// Every JSON event printed so far.
    var events: [Event] { readLines().compactMap(Event.init(line:)) }

    /// Waits for the first event from index `after` on that matches.
    @discardableResult
    func waitForEvent(
        after index: Int = 0, timeout: Duration = .seconds(10), _ description: String,
        where matches: (Event) -> Bool
    ) throws -> Event {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let all = events
            if index < all.count, let hit = all[index...].first(where: matches) { return hit }
            if !isRunning && wait(timeout: .milliseconds(10)) != nil {
                let all = events
                if index < all.count, let hit = all[index...].first(where: matches) { return hit }
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestbedError(
            "no event '\(description)' within \(timeout) from host \(host): \(text(.stdout).suffix(3000)) stderr: \(text(.stderr).suffix(2000))"
        )
    }
}

/// The machine's real clock, shared by every namespace.
func realTimeNs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

func parseJSON(_ text: String) -> Any? {
    guard let data = text.data(using: .utf8) else { return nil }
    return try? JSONSerialization.jsonObject(with: data)
}
