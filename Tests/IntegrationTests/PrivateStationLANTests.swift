import Foundation
import Testing

/// Private stations (issue 10, item 7) on the namespace LAN: a guest with the join code plays,
/// votes and chats; a guest without it learns only that the station is private, and a sniffer on
/// the LAN sees none of what plays.
@Suite(
    "Private stations on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct PrivateStationLANTests {
    /// Captures every frame on the host's eth0 for `seconds`; prints how many frames, how many UDP
    /// datagrams to `port` (the station's group), and which of the given strings showed in clear.
    static let sniffer = """
        import json, socket, struct, sys, time
        port, seconds = int(sys.argv[1]), float(sys.argv[2])
        needles = [s.encode() for s in sys.argv[3:]]
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
        s.bind(("eth0", 0))
        s.settimeout(0.2)
        end = time.monotonic() + seconds
        frames = group = 0
        found = set()
        while time.monotonic() < end:
            try:
                frame = s.recv(65535)
            except socket.timeout:
                continue
            frames += 1
            for needle in needles:
                if needle in frame:
                    found.add(needle.decode())
            if len(frame) > 42 and frame[12:14] == b"\\x08\\x00" and frame[23] == 17:
                ihl = (frame[14] & 15) * 4
                if struct.unpack("!H", frame[14 + ihl + 2:14 + ihl + 4])[0] == port:
                    group += 1
        print(json.dumps({"frames": frames, "group": group, "found": sorted(found)}), flush=True)
        """

    /// What must never cross the LAN in clear: the demo library's titles and artists, and a chat line.
    static let secrets = [
        "Sunrise Scale", "Minor Stroll", "Octave Bounce", "The Oscillators", "Sine Society", "secret pineapple",
    ]

    /// A curl on `host`: the status and the body.
    func curl(_ lan: Testbed, host: Int, _ args: [String]) throws -> (status: Int, body: String) {
        let result = try lan.run(
            host: host, ["curl", "-sS", "-m", "15", "-w", "\n%{http_code}"] + args, timeout: .seconds(20))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("With the code a guest plays and votes; without it, a clear error, a sealed advert and nothing in clear")
    func privateStation() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The DJ plays too (mpv's null output): its own player needs the proof from its own server.
        let dj = try lan.startDJ(
            host: 1, name: "Rooftop", playing: true, extra: ["--private", "--trace", lan.tracePath("dj")])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        #expect(started["private"] as? Bool == true)
        let codeEvent = try dj.waitForEvent("code") { $0.name == "join_code" }
        let code = try #require(codeEvent.string("code"))
        #expect(code.count == 15 && code.filter { $0 == "-" }.count == 2, "\(code)")
        let group = try #require(started.string("group"))
        let groupPort = try #require(Int(group.split(separator: ":").last ?? ""))
        let sources = dj.events.compactMap { event -> String? in
            (event["now_playing"] as? [String: Any])?["source"] as? String
        }
        let media = try #require(sources.first)
        let web = try #require(try dj.waitForEvent("web") { $0.name == "web_page" }.string("url"))

        // Host 3 has no code: the advert says only that the station is private.
        var browsed = ""
        for _ in 0..<20 where !browsed.contains("\n=") && !browsed.hasPrefix("=") {
            browsed = try lan.run(host: 3, ["timeout", "3", "avahi-browse", "-rpt", "_partyradio._udp"]).stdout
        }
        let resolved = try #require(browsed.split(separator: "\n").first { $0.hasPrefix("=") }, "\(browsed)")
        let txtKeys = resolved.split(separator: ";").last.map { field in
            field.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                .compactMap { $0.split(separator: "=").first.map(String.init) }
        }
        #expect(Set(txtKeys ?? []) == ["v", "priv", "seal"], "\(resolved)")
        #expect(!resolved.contains("id=") && !resolved.contains("pk=") && !resolved.contains("grp="))

        // Sniff the LAN on host 3 while a guest with the code listens, votes and chats on host 2.
        let sniff = try lan.spawn(
            host: 3, ["python3", "-c", Self.sniffer, String(groupPort), "12"] + Self.secrets)
        let listener = try lan.startListener(host: 2, role: "listener", station: "Rooftop", extra: ["--code", code])
        defer { listener.kill(signal: SIGINT) }
        let tuned = try listener.waitForEvent(timeout: .seconds(15), "tuned_in") { $0.name == "tuned_in" }
        #expect((tuned["station"] as? [String: Any])?["private"] as? Bool == true)
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" }

        let vote = try lan.partyradio(host: 2, ["vote", "up", "--code", code.lowercased(), "--json"], role: "voter")
        #expect(vote.exit == 0, "\(vote.stderr)")
        #expect((parseJSON(vote.stdout) as? [String: Any])?["up"] as? Int == 1, "\(vote.stdout)")
        try dj.waitForEvent("vote counted") { $0.name == "vote_counted" }
        let chat = try lan.partyradio(host: 2, ["chat", "secret pineapple", "--code", code], role: "voter")
        #expect(chat.exit == 0, "\(chat.stderr)")

        // The listener's player and the DJ's fetched the media with the code's proof: they play.
        for role in ["listener", "dj"] {
            let deadline = Date().addingTimeInterval(10)
            var playing = false
            while Date() < deadline && !playing {
                playing = TraceLine.read(lan.tracePath(role)).contains { ($0.playerPositionMs ?? 0) > 1000 }
                Thread.sleep(forTimeInterval: 0.2)
            }
            #expect(playing, "the \(role)'s player never got past 1 s: media refused?")
        }

        #expect(sniff.wait(timeout: .seconds(20)) == 0)
        let seen = try #require(parseJSON(sniff.text(.stdout)) as? [String: Any], "\(sniff.text(.stderr))")
        #expect((seen["group"] as? Int ?? 0) >= 10, "the sniffer saw the station's group traffic: \(seen)")
        #expect((seen["found"] as? [String] ?? ["?"]).isEmpty, "in clear on the LAN: \(seen)")

        // Host 3 without the code, and with a wrong one: one clear sentence each, nothing joined.
        let listen = try lan.partyradio(host: 3, ["listen", "Rooftop", "--no-audio", "--timeout", "8"], role: "nocode")
        #expect(listen.exit == 2)
        #expect(
            listen.stderr.contains(
                "'Rooftop' is a private station: join with --code CODE (the DJ's terminal shows it)."),
            "\(listen.stderr)")
        let noVote = try lan.partyradio(host: 3, ["vote", "up", "--timeout", "8"], role: "nocode")
        #expect(noVote.exit == 2 && noVote.stderr.contains("is a private station"), "\(noVote.stderr)")
        let wrong = try lan.partyradio(
            host: 3, ["vote", "up", "--code", "AAAA-BBBB-CCCCC", "--timeout", "8"], role: "nocode")
        #expect(wrong.exit == 2 && wrong.stderr.contains("the code given does not open it"), "\(wrong.stderr)")
        let listing = try lan.partyradio(host: 3, ["stations", "--json"], role: "nocode")
        let stations = parseJSON(listing.stdout) as? [[String: Any]] ?? []
        #expect(stations.count == 1 && stations.first?["private"] as? Bool == true)
        #expect(stations.first?["id"] == nil && stations.first?["locked"] as? String == "no_code", "\(listing.stdout)")

        // Media and the web page without proof of the code: 403.
        #expect(try curl(lan, host: 3, ["-o", "/dev/null", media]).status == 403)
        #expect(try curl(lan, host: 3, ["-o", "/dev/null", "-H", "X-Partyradio-Proof: 00", media]).status == 403)
        let base = String(web.dropLast())
        // The page itself opens (it holds nothing of the station; it asks for the code), its API does not.
        let page = try curl(lan, host: 3, [web])
        #expect(page.status == 200 && !page.body.contains("Rooftop"), "\(page)")
        let closed = try curl(lan, host: 3, [base + "/api/state"])
        #expect(closed.status == 403 && closed.body.contains("private station"), "\(closed)")
        let jar = lan.stateDir("jar") + "/cookies"
        let join = ["-H", "Origin: \(base)", "-c", jar, "-b", jar, base + "/api/join", "--data-urlencode"]
        #expect(try curl(lan, host: 3, join + ["code=AAAA-BBBB-CCCCC"]).status == 403)
        let joined = try curl(lan, host: 3, join + ["code=\(code.replacingOccurrences(of: "-", with: ""))"])
        #expect(joined.status == 200, "\(joined)")
        let state = try curl(lan, host: 3, ["-b", jar, base + "/api/state"])
        #expect(state.status == 200 && state.body.contains("Rooftop"), "\(state)")
        // The page plays the station with its cookie (a browser cannot send mpv's header).
        #expect(try curl(lan, host: 3, ["-o", "/dev/null", "-b", jar, media]).status == 200)
        // Wrong codes are limited per address: the sixth within a minute is 429 even if right.
        for _ in 0..<4 { _ = try curl(lan, host: 3, join + ["code=AAAA-BBBB-CCCCD"]) }
        #expect(try curl(lan, host: 3, join + ["code=\(code)"]).status == 429)

        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("The code survives a restart; --new-code replaces it; without --private the station is public again")
    func codeSurvivesRestart() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        func run(_ extra: [String]) throws -> (code: String?, isPrivate: Bool?) {
            let dj = try lan.startDJ(host: 1, name: "Attic", extra: extra)
            let started = try dj.waitForEvent("started") { $0.name == "station_started" }
            let code = dj.events.first { $0.name == "join_code" }?.string("code")
            dj.send("quit")
            #expect(dj.wait(timeout: .seconds(5)) == 0)
            return (code, started["private"] as? Bool)
        }
        let first = try run(["--private"])
        let again = try run(["--private"])
        #expect(first.code != nil && first.code == again.code && first.isPrivate == true)
        let renewed = try run(["--private", "--new-code"])
        #expect(renewed.code != nil && renewed.code != first.code)
        let open = try run([])
        #expect(open.code == nil && open.isPrivate == false)
    }
}
