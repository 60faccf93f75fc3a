import Foundation
import Testing

/// mpv with its MPRIS plugin (Debian's mpv-mpris), and playerctl to ask it what it plays.
private let hasMpvMpris = ["/usr/bin/mpv", "/etc/mpv/scripts/mpris.so", "/usr/bin/playerctl", "/usr/bin/dbus-daemon"]
    .allSatisfy { FileManager.default.fileExists(atPath: $0) }

/// A live DJ's now playing from the player it follows over MPRIS (issue 28, item 2; docs/LIVE.md "Now
/// playing from the player"): a real mpv with mpv-mpris on a private session bus on the DJ's host
/// plays tagged WAVs into the station's PulseAudio sink; the DJ follows it (the default: the first
/// player that plays, never its own MPRIS player on the same bus). Another host sees mpv's track
/// as now playing; a crowd skip makes mpv play its next track; mpv quitting is "Live" again, until
/// another player plays.
@Suite(
    "A live station's now playing from an MPRIS player on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"),
    .enabled(if: hasMpvMpris, "mpv, mpv-mpris or playerctl is not installed (scripts/ensure-packages.sh --for test)"))
struct LiveMPRISLANTests {
    static let sink = "partyradio_live_party"
    static let tracks = [("First Light", "Band One"), ("Second Wind", "Band Two"), ("Third Rail", "Band Three")]

    /// A WAV of a quiet tone, 48 kHz stereo, with its title and artist in a LIST INFO chunk (INAM,
    /// IART), which mpv reads as its `title` and `artist` tags and mpv-mpris sends as xesam:title and
    /// xesam:artist.
    static func taggedWAV(title: String, artist: String, seconds: Int, hz: Double) -> Data {
        let rate = 48_000
        var samples: [Int16] = []
        samples.reserveCapacity(rate * seconds * 2)
        for i in 0..<(rate * seconds) {
            let value = Int16(4000 * sin(2 * Double.pi * hz * Double(i) / Double(rate)))
            samples += [value, value]
        }
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        func text(_ id: String, _ value: String) -> Data {
            var bytes = Array(value.utf8) + [0]
            if bytes.count % 2 == 1 { bytes.append(0) }
            var chunk = Data(id.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { chunk.append(contentsOf: $0) }
            chunk.append(contentsOf: bytes)
            return chunk
        }
        let info = Data("INFO".utf8) + text("INAM", title) + text("IART", artist)
        let pcm = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(4 + 24 + 8 + info.count + 8 + pcm))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(2))
        append(UInt32(rate))
        append(UInt32(rate * 4))
        append(UInt16(4))
        append(UInt16(16))
        data.append(contentsOf: Array("LIST".utf8))
        append(UInt32(info.count))
        data.append(info)
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(pcm))
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// The now playing `stations --json` on `host` shows for the one station: title and artist.
    static func nowPlaying(_ lan: Testbed, host: Int, role: String) throws -> (String, String)? {
        let listing = try lan.partyradio(host: host, ["stations", "--json"], role: role)
        guard listing.exit == 0, let stations = parseJSON(listing.stdout) as? [[String: Any]],
            let track = stations.first?["now_playing"] as? [String: Any]
        else { return nil }
        return (track["title"] as? String ?? "", track["artist"] as? String ?? "")
    }

    /// Polls `stations --json` on `host` until it shows `title` (and `artist`).
    static func waitForNowPlaying(
        _ lan: Testbed, host: Int, title: String, artist: String, timeout: Duration = .seconds(10)
    ) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        var last: (String, String)?
        var round = 0
        while ContinuousClock.now < deadline {
            round += 1
            last = try nowPlaying(lan, host: host, role: "observer\(round % 2)")
            if let last, last == (title, artist) { return true }
            Thread.sleep(forTimeInterval: 0.3)
        }
        Issue.record(
            "stations --json on host \(host) showed \(String(describing: last)), not '\(title)' by '\(artist)'")
        return false
    }

    /// What playerctl says of mpv on the DJ's bus.
    static func playerctl(_ lan: Testbed, env: [String: String], _ args: [String]) -> String {
        let result = try? lan.run(
            host: 1, ["/usr/bin/playerctl", "--player=mpv"] + args, env: env, timeout: .seconds(10))
        return result?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    @Test("mpv's track is now playing on the LAN; a crowd skip is mpv's Next; mpv quitting is Live again")
    func mpvFeedsNowPlaying() throws {
        let began = ContinuousClock.now
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The DJ's desktop: a session bus (its socket in host 1's own /run) and a sound server.
        let socket = "/run/partyradio-live-mpris.bus"
        let bus = try lan.spawn(
            host: 1, ["dbus-daemon", "--session", "--nofork", "--print-address", "--address=unix:path=\(socket)"])
        defer { bus.kill() }
        try bus.waitForLine(containing: socket, timeout: .seconds(10))
        let (sound, soundEnv) = try lan.startSoundServer(host: 1)
        defer { sound.kill() }
        let env = soundEnv.merging(["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(socket)"]) { a, _ in a }

        // Two voters on host 2 make a crowd: two keys from one machine count with --voters-per-address 2.
        let dj = try lan.startDJ(
            host: 1, name: "Live Party",
            extra: ["--live", "--crowd-skip", "50", "--vote-weight-after", "0", "--voters-per-address", "2", "-v"],
            env: env)
        defer { dj.kill() }
        try dj.waitForEvent("started") { $0.name == "station_started" }
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: "Live", artist: ""), "no player yet: Live")

        // mpv plays three tagged tracks into the station's sink, each from 12 s in (crowd skip waits
        // for a track to have played 10 s).
        let dir = lan.stateDir("music")
        var files: [String] = []
        for (index, (title, artist)) in Self.tracks.enumerated() {
            let path = "\(dir)/track\(index + 1).wav"
            try Self.taggedWAV(title: title, artist: artist, seconds: 40, hz: 330 + 110 * Double(index))
                .write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let mpvStarted = ContinuousClock.now
        let mpv = try lan.spawn(
            host: 1,
            [
                "/usr/bin/mpv", "--no-config", "--script=/etc/mpv/scripts/mpris.so", "--no-terminal", "--vo=null",
                "--ao=pulse", "--audio-device=pulse/\(Self.sink)", "--start=12",
            ] + files, env: env)
        defer { mpv.kill() }

        // (a) The DJ follows mpv (not its own MPRIS player on the same bus); host 2 sees mpv's track.
        let following = try dj.waitForEvent(timeout: .seconds(15), "following mpv") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("Following the player")
        }
        #expect(following.string("message")?.contains("'mpv'") == true, "\(following.fields)")
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: "First Light", artist: "Band One"))
        let shownAfter = ContinuousClock.now - mpvStarted
        print("live mpris: mpv's first track shown on host 2 \(shownAfter) after mpv started")

        // (b) Two down votes skip the track: the DJ asks mpv for Next, mpv plays track 2, and the
        // station shows it.
        let before = dj.events.count
        for voter in ["voter1", "voter2"] {
            let vote = try lan.partyradio(host: 2, ["vote", "down", "--json"], role: voter)
            #expect(vote.exit == 0, "\(vote.stderr)")
        }
        let skipped = try dj.waitForEvent(after: before, timeout: .seconds(10), "crowd skip") {
            $0.name == "track_skipped" && $0.string("reason") == "crowd"
        }
        #expect(skipped.string("title") == "First Light", "\(skipped.fields)")
        let skippedAt = ContinuousClock.now
        let second = try dj.waitForEvent(after: before, timeout: .seconds(10), "mpv's next track") {
            $0.name == "state" && ($0["now_playing"] as? [String: Any])?["title"] as? String == "Second Wind"
        }
        #expect(second.int("down") == 0, "the tally starts again")
        #expect(Self.playerctl(lan, env: env, ["metadata", "xesam:title"]) == "Second Wind")
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: "Second Wind", artist: "Band Two"))
        print("live mpris: crowd skip to track 2 shown on host 2 \(ContinuousClock.now - skippedAt) after the skip")

        // The DJ's pause and resume are mpv's Pause and Play; the DJ's own MPRIS player shows mpv's track.
        let paused = dj.events.count
        dj.send("pause")
        try dj.waitForEvent(after: paused, timeout: .seconds(10), "paused") {
            $0.name == "state" && $0.string("change") == "paused"
        }
        #expect(Self.playerctl(lan, env: env, ["status"]) == "Paused")
        dj.send("resume")
        try dj.waitForEvent(after: paused, timeout: .seconds(10), "resumed") {
            $0.name == "state" && $0.string("change") == "resumed"
        }
        #expect(Self.playerctl(lan, env: env, ["status"]) == "Playing")
        // The DJ's seek is mpv's SetPosition on its track: back to 2 s (it started at 12 s, so it
        // is past 12 s unless the seek reached it).
        dj.send("seek 2")
        var position = 99.0
        let seekDeadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < seekDeadline {
            position = Double(Self.playerctl(lan, env: env, ["position"])) ?? 99
            if position < 8 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(position >= 2 && position < 8, "mpv's position after the DJ's seek to 2 s: \(position)")
        let own = try? lan.run(
            host: 1, ["/usr/bin/playerctl", "--player=partyradio", "metadata", "xesam:title"], env: env)
        #expect(own?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "Second Wind")

        // (c) mpv quits: the station is Live again.
        let quitAt = ContinuousClock.now
        mpv.kill(signal: SIGTERM)
        #expect(mpv.wait(timeout: .seconds(10)) != nil)
        try dj.waitForEvent(after: before, timeout: .seconds(10), "player gone") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("is gone")
        }
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: "Live", artist: ""))
        print("live mpris: Live again on host 2 \(ContinuousClock.now - quitAt) after mpv quit")

        // By default a player that does not play is not followed (the nonsense player's status is an
        // integer at first); once it plays, it is.
        let fixture = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/mpris_nonsense_player.py").path
        let other = try lan.spawn(host: 1, ["/usr/bin/python3", "-u", fixture], env: env, stdin: true)
        defer { other.kill() }
        try other.waitForLine(containing: "ready", timeout: .seconds(10))
        Thread.sleep(forTimeInterval: 1)
        #expect(try Self.nowPlaying(lan, host: 2, role: "observer") ?? ("", "") == ("Live", ""))
        let playing = dj.events.count
        other.send("next")
        try dj.waitForEvent(after: playing, timeout: .seconds(10), "following the player that plays") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("Following the player 'nonsense'")
        }

        dj.kill(signal: SIGINT)
        #expect(dj.wait(timeout: .seconds(10)) != nil)
        print("live mpris: the test took \(ContinuousClock.now - began)")
    }

    @Test("a player's nonsense is dropped, never a crash; only an image is its artwork; no session bus: one notice")
    func nonsensePlayer() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dir = lan.stateDir("live")
        let fifo = "\(dir)/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let live = ["--live", "pipe:\(fifo)?sampleformat=48000:16:2"]

        // No session bus: said once, and the station is Live.
        let alone = try lan.startDJ(
            host: 1, name: "Live Party", role: "alone", extra: live, env: ["DBUS_SESSION_BUS_ADDRESS": ""])
        try alone.waitForEvent("no session bus") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("No session bus")
        }
        alone.kill(signal: SIGINT)
        #expect(alone.wait(timeout: .seconds(10)) == 0)
        #expect(alone.events.filter { ($0.string("message") ?? "").contains("session bus") }.count == 1)

        let socket = "/run/partyradio-live-nonsense.bus"
        let bus = try lan.spawn(
            host: 1, ["dbus-daemon", "--session", "--nofork", "--print-address", "--address=unix:path=\(socket)"])
        defer { bus.kill() }
        try bus.waitForLine(containing: socket, timeout: .seconds(10))
        let env = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(socket)"]
        let fixture = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/mpris_nonsense_player.py").path
        // A cover on the DJ's disk (a PNG's signature and a few bytes more) for the third stage.
        let cover = "\(dir)/cover.png"
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("partyradio cover".utf8)
        #expect(FileManager.default.createFile(atPath: cover, contents: Data(png)))
        let player = try lan.spawn(host: 1, ["/usr/bin/python3", "-u", fixture, cover], env: env, stdin: true)
        defer { player.kill() }
        try player.waitForLine(containing: "ready", timeout: .seconds(10))

        // Named, it is followed although it says it does not play (its status is an integer).
        let dj = try lan.startDJ(
            host: 1, name: "Live Party", extra: live + ["--live-player", "nonsense", "-v"], env: env)
        defer { dj.kill() }
        let following = try dj.waitForEvent(timeout: .seconds(10), "following the nonsense player") {
            $0.name == "notice" && ($0.string("message") ?? "").contains("Following the player")
        }
        #expect(following.string("message")?.contains("'nonsense'") == true)
        // Every other key of the wrong type: skipped, the title after them shown.
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: "Plain Zero", artist: ""))

        // Text with escapes, overrides and 300 accented letters, lengths and IDs out of bounds: cleaned.
        let before = dj.events.count
        player.send("next")
        let state = try dj.waitForEvent(after: before, timeout: .seconds(10), "the cleaned track") {
            $0.name == "state" && (($0["now_playing"] as? [String: Any])?["title"] as? String ?? "").hasPrefix("Red")
        }
        let track = try #require(state["now_playing"] as? [String: Any])
        let title = try #require(track["title"] as? String)
        let artist = try #require(track["artist"] as? String)
        for text in [title, artist] {
            #expect(text.utf8.count <= 100, "\(text.utf8.count) bytes")
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" }, "\(text.debugDescription)")
        }
        #expect(title.hasPrefix("Red") && title.contains("Title é"), "\(title)")
        #expect(artist.hasPrefix("Bell, Bell"), "\(artist)")
        #expect(track["duration_ms"] as? Int == 0, "a length of 2^64 - 1 is no length")
        #expect(try Self.waitForNowPlaying(lan, host: 2, title: title, artist: artist))
        print("live mpris nonsense: shown as '\(title)' by '\(artist)'")

        // Artwork on the DJ's disk is the page's: the state names /art/ID, which serves the PNG to a
        // guest on another host. A player naming /etc/passwd as artwork gets nothing served.
        let (url, _) = try lan.pageLinks(dj)
        for (stage, expected) in [("Cover Song", png), ("Secret Song", nil)] {
            let mark = dj.events.count
            player.send("next")
            try dj.waitForEvent(after: mark, timeout: .seconds(10), stage) {
                $0.name == "state" && ($0["now_playing"] as? [String: Any])?["title"] as? String == stage
            }
            let state = try lan.run(host: 2, ["curl", "-s", url + "api/state"])
            let now = (parseJSON(state.stdout) as? [String: Any])?["now"] as? [String: Any]
            let path = try #require(now?["artwork"] as? String, "\(stage): \(state.stdout.prefix(400))")
            #expect(path.hasPrefix("/art/live:"))
            let saved = "\(dir)/art-\(stage.split(separator: " ")[0])"
            let art = try lan.run(
                host: 2, ["curl", "-s", "-o", saved, "-w", "%{http_code} %{content_type}", url + path.dropFirst()])
            if let expected {
                #expect(art.stdout == "200 image/png", "\(stage): \(art.stdout)")
                #expect(FileManager.default.contents(atPath: saved).map(Array.init) == expected)
            } else {
                #expect(art.stdout.hasPrefix("404"), "\(stage): \(art.stdout)")
            }
        }
        #expect(dj.isRunning && player.isRunning)

        // The session bus goes away, and the player with it: the station is Live and the DJ runs on.
        // The bus back with a player on it, the DJ follows it again by itself.
        let lost = dj.events.count
        bus.kill()
        player.kill()
        try dj.waitForEvent(after: lost, timeout: .seconds(10), "Live without the bus") {
            $0.name == "state" && ($0["now_playing"] as? [String: Any])?["title"] as? String == "Live"
        }
        #expect(dj.isRunning)
        unlink(socket)
        let busAgain = try lan.spawn(
            host: 1, ["dbus-daemon", "--session", "--nofork", "--print-address", "--address=unix:path=\(socket)"])
        defer { busAgain.kill() }
        try busAgain.waitForLine(containing: socket, timeout: .seconds(10))
        let playerAgain = try lan.spawn(host: 1, ["/usr/bin/python3", "-u", fixture, cover], env: env, stdin: true)
        defer { playerAgain.kill() }
        try playerAgain.waitForLine(containing: "ready", timeout: .seconds(10))
        try dj.waitForEvent(after: lost, timeout: .seconds(15), "the player followed again") {
            $0.name == "state" && ($0["now_playing"] as? [String: Any])?["title"] as? String == "Plain Zero"
        }
        dj.kill(signal: SIGINT)
        #expect(dj.wait(timeout: .seconds(10)) == 0)
    }
}
