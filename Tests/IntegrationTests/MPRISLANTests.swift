import Foundation
import Testing

/// playerctl drives the players, and each host needs a session bus of its own.
private let hasPlayerctl = ["/usr/bin/playerctl", "/usr/bin/dbus-daemon"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// The desktop's media controls (issue 12, item 4): `listen` and `dj` offer an MPRIS 2 player on
/// the session bus, driven here with playerctl. Each host gets a private session bus of its own,
/// started inside the host (its socket in the host's private /run): never the machine's.
@Suite(
    "MPRIS on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: hasPlayerctl, "playerctl or dbus-daemon is not installed (scripts/ensure-packages.sh --for test)"))
struct MPRISLANTests {
    /// A session bus inside `host`, listening on a socket in the host's own /run.
    func startBus(_ lan: Testbed, host: Int) throws -> (TestbedProcess, [String: String]) {
        let socket = "/run/partyradio-mpris-\(host).bus"
        let address = "unix:path=\(socket)"
        let bus = try lan.spawn(
            host: host, ["dbus-daemon", "--session", "--nofork", "--print-address", "--address=\(address)"])
        try bus.waitForLine(containing: socket, timeout: .seconds(10))
        return (bus, ["DBUS_SESSION_BUS_ADDRESS": address])
    }

    /// playerctl on `host` against its private bus; its trimmed stdout.
    func playerctl(_ lan: Testbed, host: Int, env: [String: String], _ args: [String]) throws -> String {
        let result = try lan.run(
            host: host, ["playerctl", "--player=partyradio"] + args, env: env, timeout: .seconds(15))
        #expect(result.exit == 0, "playerctl \(args): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls playerctl until its answer is `expected`.
    func waitFor(
        _ expected: String, _ lan: Testbed, host: Int, env: [String: String], _ args: [String],
        timeout: Duration = .seconds(8)
    ) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while ContinuousClock.now < deadline {
            last =
                (try? lan.run(host: host, ["playerctl", "--player=partyradio"] + args, env: env))?.stdout
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if last == expected { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        Issue.record("playerctl \(args) said '\(last)', not '\(expected)'")
        return false
    }

    @Test("playerctl shows a listener's track, mutes it, and its next is a down vote; on the DJ it skips and pauses")
    func playerctlDrivesListenerAndDJ() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (djBus, djEnv) = try startBus(lan, host: 1)
        defer { djBus.kill() }
        let dj = try lan.startDJ(host: 1, name: "Desk", env: djEnv)
        let (listenerBus, listenerEnv) = try startBus(lan, host: 2)
        defer { listenerBus.kill() }
        let listener = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "listen", "Desk", "--json-events", "--audio-driver", "null", "--state-dir",
                lan.stateDir("listener"),
            ], env: listenerEnv)
        defer { listener.kill() }
        try listener.waitForEvent(timeout: .seconds(15), "tuned_in") { $0.name == "tuned_in" }
        let playing = try dj.waitForEvent("state") { $0.name == "state" || $0.name == "progress" }
        let track = try #require(playing["now_playing"] as? [String: Any])
        let title = try #require(track["title"] as? String)
        let artist = try #require(track["artist"] as? String)

        // The listener's player: listed, with the track, playing.
        let list = try lan.run(host: 2, ["playerctl", "-l"], env: listenerEnv)
        #expect(list.stdout.contains("partyradio"), "playerctl -l: \(list.stdout) \(list.stderr)")
        #expect(try waitFor(title, lan, host: 2, env: listenerEnv, ["metadata", "xesam:title"]))
        #expect(try playerctl(lan, host: 2, env: listenerEnv, ["metadata", "xesam:artist"]) == artist)
        let metadata = try playerctl(lan, host: 2, env: listenerEnv, ["metadata"])
        #expect(metadata.contains("mpris:trackid") && metadata.contains("mpris:length"), "\(metadata)")
        #expect(try waitFor("Playing", lan, host: 2, env: listenerEnv, ["status"]))
        let position = Double(try playerctl(lan, host: 2, env: listenerEnv, ["position"])) ?? -1
        #expect(position >= 0, "position")

        // play-pause mutes this listener only (the station plays on), and unmutes.
        _ = try playerctl(lan, host: 2, env: listenerEnv, ["play-pause"])
        #expect(try waitFor("Paused", lan, host: 2, env: listenerEnv, ["status"]))
        try listener.waitForEvent("muted notice") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("Muted")
        }
        _ = try playerctl(lan, host: 2, env: listenerEnv, ["play-pause"])
        #expect(try waitFor("Playing", lan, host: 2, env: listenerEnv, ["status"]))

        // next from the listener: a down vote the DJ counts.
        let votesBefore = dj.events.count
        _ = try playerctl(lan, host: 2, env: listenerEnv, ["next"])
        let counted = try dj.waitForEvent(after: votesBefore, "vote_counted") { $0.name == "vote_counted" }
        #expect(counted.string("choice") == "down")

        // The DJ's own player, on its own bus: next skips the track.
        #expect(try waitFor(title, lan, host: 1, env: djEnv, ["metadata", "xesam:title"]))
        #expect(try playerctl(lan, host: 1, env: djEnv, ["status"]) == "Playing")
        let before = dj.events.count
        _ = try playerctl(lan, host: 1, env: djEnv, ["next"])
        let skipped = try dj.waitForEvent(after: before, "track skipped") {
            $0.name == "state" && $0.string("change") == "track"
        }
        let next = try #require((skipped["now_playing"] as? [String: Any])?["title"] as? String)
        #expect(next != title)
        #expect(try waitFor(next, lan, host: 1, env: djEnv, ["metadata", "xesam:title"]))
        #expect(try waitFor(next, lan, host: 2, env: listenerEnv, ["metadata", "xesam:title"]))

        // pause pauses the station: the listener hears it, and its player says so.
        let listenerBefore = listener.events.count
        _ = try playerctl(lan, host: 1, env: djEnv, ["pause"])
        #expect(try waitFor("Paused", lan, host: 1, env: djEnv, ["status"]))
        try listener.waitForEvent(after: listenerBefore, "paused") {
            $0.name == "state" && $0.string("change") == "paused"
        }
        #expect(try waitFor("Paused", lan, host: 2, env: listenerEnv, ["status"]))
        _ = try playerctl(lan, host: 1, env: djEnv, ["play"])
        #expect(try waitFor("Playing", lan, host: 2, env: listenerEnv, ["status"]))
    }

    @Test("Without a session bus there is no player, silently (and -v says why)")
    func noSessionBus() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.spawn(
            host: 1,
            [
                Testbed.partyradioBinary, "dj", "--name", "Quiet", "--json-events", "--no-audio", "-v", "--state-dir",
                lan.stateDir("dj"),
            ], env: ["DBUS_SESSION_BUS_ADDRESS": ""], stdin: true)
        defer { dj.kill() }
        try dj.waitForLine(containing: "\"station_published\"", timeout: .seconds(15))
        try dj.waitForLine(containing: "no MPRIS player", timeout: .seconds(5), stream: .stderr)
        #expect(!dj.text(.stdout).contains("MPRIS"))
    }
}
