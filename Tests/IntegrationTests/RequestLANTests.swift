import Foundation
import Testing

/// Guests' requests on a namespace LAN, driving the real binary (issue 8, "Requests"): `request`
/// by title words, catalog ID and a search made on the guest's own node, `queue` on another host,
/// votes on requests, the DJ's modes and limits, and every refusal. Apple's catalog is the fixture
/// server, on each host's own loopback, inside the test namespaces.
@Suite(
    "Requests on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct RequestLANTests {
    /// Starts the fixture server on `host` and returns it with its base URL.
    func fixtureServer(_ lan: Testbed, host: Int) throws -> (TestbedProcess, String) {
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/catalog_fixture_server.py").path
        let server = try lan.spawn(host: host, ["python3", script, "0"], stdin: true)  // exits when stdin closes
        let line = try server.waitForLine(containing: "PORT ", timeout: .seconds(10))
        return (server, "http://127.0.0.1:\(line.split(separator: " ").last ?? "")")
    }

    /// A one-shot command of guest `role` on `host`, aimed at `station` by name.
    func guest(
        _ lan: Testbed, host: Int, role: String, station: String, _ args: [String], env: [String: String] = [:]
    ) throws -> (exit: Int32, stdout: String, stderr: String) {
        try lan.run(
            host: host,
            [Testbed.partyradioBinary] + args + ["--station", station, "--state-dir", lan.stateDir(role)], env: env)
    }

    func object(_ text: String) -> [String: Any] { parseJSON(text) as? [String: Any] ?? [:] }

    /// `queue --json`'s requests as (ID, title, who asked, up, down, awaiting approval).
    func requests(_ queue: [String: Any]) -> [(id: Int, title: String, by: String, up: Int, down: Int, held: Bool)] {
        (queue["up_next"] as? [[String: Any]] ?? []).compactMap { entry in
            guard let id = entry["request_id"] as? Int else { return nil }
            return (
                id, entry["title"] as? String ?? "", entry["requested_by"] as? String ?? "", entry["up"] as? Int ?? -1,
                entry["down"] as? Int ?? -1, entry["awaiting_approval"] as? Bool ?? false
            )
        }
    }

    @Test("Requests by title words, catalog ID and a search on the guest's node; queue, votes, and the top plays next")
    func requestVoteAndPlay() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (djCatalog, djURL) = try fixtureServer(lan, host: 1)
        let (guestCatalog, guestURL) = try fixtureServer(lan, host: 3)
        defer { withExtendedLifetime((djCatalog, guestCatalog)) {} }
        let dj = try lan.startDJ(host: 1, name: "Jukebox", env: ["PARTYRADIO_ITUNES_URL": djURL])
        let listener = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "Jukebox", "--as", "Carol", "--json-events", "--no-audio",
                "--state-dir", lan.stateDir("carol-listens"),
            ])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }

        // Title words of the DJ's library: queued at once, as request #1.
        let words = try guest(
            lan, host: 2, role: "bob", station: "Jukebox", ["request", "blue", "hour", "--as", "Bob"])
        #expect(words.exit == 0, "\(words.stderr)")
        #expect(
            words.stdout.contains("Queued “Blue Hour” by Sine Society: number 1 of the requests (request #1)."),
            "\(words.stdout)")
        try dj.waitForEvent("the DJ sees it live") {
            $0.name == "request" && $0.string("guest") == "Bob" && $0.string("status") == "queued"
        }
        // A catalog ID the DJ looks up in its own catalog.
        let byID = object(
            try guest(lan, host: 2, role: "bob", station: "Jukebox", ["request", "697195462", "--as", "Bob", "--json"])
                .stdout)
        #expect(byID["status"] as? String == "queued" && byID["request_id"] as? Int == 2)
        #expect(byID["title"] as? String == "One More Time" && byID["resolved_by"] as? String == "catalog_id")
        #expect(byID["position"] as? Int == 2 && byID["track_id"] as? String == "697195462")
        // Words no title in the DJ's library has: searched in the catalog on Alice's own node.
        let searched = try guest(
            lan, host: 3, role: "alice", station: "Jukebox", ["request", "get", "lucky", "--as", "Alice", "--json"],
            env: ["PARTYRADIO_ITUNES_URL": guestURL])
        let bySearch = object(searched.stdout)
        #expect(searched.exit == 0, "\(searched.stderr)")
        #expect(bySearch["resolved_by"] as? String == "search" && bySearch["library_missed"] as? Bool == true)
        #expect(bySearch["track_id"] as? String == "617154366" && bySearch["request_id"] as? Int == 3)

        // Another host lists them in order with who asked; the DJ's own tracks follow.
        let listed = try guest(lan, host: 2, role: "observer", station: "Jukebox", ["queue", "--json"])
        #expect(listed.exit == 0, "\(listed.stderr)")
        let queue = object(listed.stdout)
        #expect(queue["requests_mode"] as? String == "open" && queue["requests_waiting"] as? Int == 3)
        #expect(requests(queue).map(\.id) == [1, 2, 3])
        #expect(requests(queue).map(\.by) == ["Bob", "Bob", "Alice"])
        #expect(requests(queue).first?.title == "Blue Hour")
        #expect(((queue["up_next"] as? [[String: Any]])?.count ?? 0) > 3, "the DJ's next tracks follow")

        // Votes reorder: #3 gets two up votes, #1 a down vote.
        // One guest, one vote: the two voters are on two machines.
        for (host, role) in [(2, "v1"), (3, "v2")] {
            let vote = try guest(lan, host: host, role: role, station: "Jukebox", ["vote", "up", "--request", "3"])
            #expect(vote.exit == 0 && vote.stdout.contains("Voted up on request #3"), "\(vote.stderr)")
        }
        let down = object(
            try guest(lan, host: 2, role: "v1", station: "Jukebox", ["vote", "down", "--request", "1", "--json"])
                .stdout)
        #expect(down["status"] as? String == "counted" && down["down"] as? Int == 1 && down["position"] as? Int == 3)
        let reordered = requests(
            object(try guest(lan, host: 3, role: "observer", station: "Jukebox", ["queue", "--json"]).stdout))
        #expect(reordered.map(\.id) == [3, 2, 1])
        #expect(reordered.first?.up == 2 && reordered.last?.down == 1)
        // Every listener sees the new order too.
        try listener.waitForEvent("the listener's up next") { event in
            let ids = (event["up_next"] as? [[String: Any]])?.compactMap { $0["request_id"] as? Int }
            return event.name == "up_next" && ids == [3, 2, 1]
        }
        let table = try guest(lan, host: 3, role: "observer", station: "Jukebox", ["queue"])
        #expect(
            table.stdout.contains("#3 Get Lucky") && table.stdout.contains("asked by Alice  +2 −0"), "\(table.stdout)")

        // When the track ends (the DJ's next), the top request plays; a vote on it is refused.
        dj.send("next")
        try listener.waitForEvent("the request plays") {
            $0.name == "state" && $0.string("change") == "track" && $0.string("track_id") == "617154366"
        }
        let late = try guest(lan, host: 2, role: "v1", station: "Jukebox", ["vote", "up", "--request", "3", "--json"])
        #expect(late.exit == 1 && late.stderr.contains("already played"), "\(late.stderr)")
        #expect(object(late.stdout)["status"] as? String == "played")
        let after = requests(
            object(try guest(lan, host: 2, role: "observer", station: "Jukebox", ["queue", "--json"]).stdout))
        #expect(after.map(\.id) == [2, 1])
        listener.kill()
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Approve mode, the per-guest limit, drop, mute, unknown tracks, and a station that takes no requests")
    func limitsModesAndRefusals() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (server, url) = try fixtureServer(lan, host: 1)
        defer { withExtendedLifetime(server) {} }
        let dj = try lan.startDJ(
            host: 1, name: "Strict", extra: ["--requests", "approve", "--max-requests", "2"],
            env: ["PARTYRADIO_ITUNES_URL": url])
        let closed = try lan.startDJ(host: 1, name: "Closed", role: "dj2", extra: ["--requests", "off"])
        func bob(_ args: [String]) throws -> (exit: Int32, stdout: String, stderr: String) {
            try guest(lan, host: 2, role: "bob", station: "Strict", args + ["--as", "Bob"])
        }

        // Approve mode: queued, but held for the DJ.
        let held = try bob(["request", "minor", "stroll"])
        #expect(held.exit == 0 && held.stdout.contains("plays once the DJ approves it"), "\(held.stdout)")
        #expect(
            object(try bob(["request", "octave bounce", "--json"]).stdout)["status"] as? String == "awaiting_approval")
        // Over the limit of 2 waiting: refused, nothing changes.
        let over = try bob(["request", "pentatonic", "--json"])
        #expect(over.exit == 1 && over.stderr.contains("at most 2 requests per guest"), "\(over.stderr)")
        #expect(
            object(over.stdout)["status"] as? String == "over_limit" && object(over.stdout)["queued"] as? Bool == false)

        dj.send("approve 1")
        try dj.waitForEvent("approved") { $0.name == "notice" && $0.string("message") == "Approved request #1." }
        dj.send("drop 2")
        try dj.waitForEvent("dropped") { $0.name == "notice" && $0.string("message") == "Dropped request #2." }
        let queue = object(try guest(lan, host: 2, role: "observer", station: "Strict", ["queue", "--json"]).stdout)
        #expect(queue["requests_mode"] as? String == "approve")
        #expect(requests(queue).map(\.id) == [1] && requests(queue).first?.held == false)
        let onDropped = try guest(lan, host: 2, role: "carol", station: "Strict", ["vote", "up", "--request", "2"])
        #expect(onDropped.exit == 1 && onDropped.stderr.contains("dropped request #2"), "\(onDropped.stderr)")
        let unknownVote = try guest(lan, host: 2, role: "carol", station: "Strict", ["vote", "up", "--request", "99"])
        #expect(unknownVote.exit == 1 && unknownVote.stderr.contains("No request #99"), "\(unknownVote.stderr)")

        // Unknown tracks: no such title in the library, no such catalog ID.
        let noTitle = try guest(
            lan, host: 2, role: "carol", station: "Strict", ["request", "--library", "no such song"])
        #expect(noTitle.exit == 1 && noTitle.stderr.contains("no such track"), "\(noTitle.stderr)")
        let noID = try guest(lan, host: 2, role: "carol", station: "Strict", ["request", "999", "--json"])
        #expect(noID.exit == 1 && object(noID.stdout)["status"] as? String == "unknown_track", "\(noID.stderr)")

        // A muted guest: their waiting request goes, and new ones are refused.
        #expect(try bob(["request", "blue hour"]).exit == 0)
        dj.send("mute Bob")
        try dj.waitForEvent("muted") {
            $0.name == "notice" && ($0.string("message") ?? "").hasPrefix("Muted 'Bob': no chat or requests")
        }
        let muted = try bob(["request", "last call", "--json"])
        #expect(muted.exit == 1 && muted.stderr.contains("muted"), "\(muted.stderr)")
        #expect(object(muted.stdout)["status"] as? String == "muted")
        let empty = try guest(lan, host: 2, role: "observer", station: "Strict", ["queue"])
        #expect(empty.exit == 0 && !empty.stdout.contains("asked by Bob"), "\(empty.stdout)")

        // A station that takes no requests says so.
        let off = try guest(lan, host: 2, role: "carol", station: "Closed", ["request", "sunrise"])
        #expect(off.exit == 1 && off.stderr.contains("takes no requests"), "\(off.stderr)")
        let offQueue = try guest(lan, host: 2, role: "observer", station: "Closed", ["queue"])
        #expect(offQueue.stdout.contains("the DJ takes no requests"), "\(offQueue.stdout)")
        for station in [dj, closed] {
            station.send("quit")
            #expect(station.wait(timeout: .seconds(5)) == 0)
        }
    }

    /// A DJ whose catalog never answers (no internet: DNS and connects that hang) answers a
    /// request for an unknown catalog ID "could not reach the catalog" while the guest still
    /// waits, and refuses a non-numeric ID without asking its catalog.
    @Test("A catalog that never answers: the request is answered 'unavailable' in time; a non-numeric ID is no track")
    func catalogThatNeverAnswers() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Accepts connections and never says a word.
        let silent = try lan.spawn(
            host: 1,
            [
                "python3", "-c",
                "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(64); "
                    + "print('PORT', s.getsockname()[1], flush=True); held=[]\nwhile True: held.append(s.accept())",
            ], stdin: true)
        let line = try silent.waitForLine(containing: "PORT ", timeout: .seconds(10))
        defer { silent.kill() }
        let url = "http://127.0.0.1:\(line.split(separator: " ").last ?? "")"
        let dj = try lan.startDJ(host: 1, name: "Offline", env: ["PARTYRADIO_ITUNES_URL": url])
        let page = try dj.waitForEvent("web_page") { $0.name == "web_page" }
        let base = String(try #require(page.string("url")).dropLast())

        let started = Date()
        let asked = try guest(lan, host: 2, role: "bob", station: "Offline", ["request", "1440857781", "--as", "Bob"])
        let seconds = Date().timeIntervalSince(started)
        #expect(asked.exit == 1, "\(asked.stdout) \(asked.stderr)")
        #expect(asked.stderr.contains("could not reach the catalog"), "after \(seconds) s: \(asked.stderr)")

        // The page may send any ID: a word is no track, answered without a lookup (a lookup of
        // this catalog could only end "unavailable").
        let posted = try lan.run(
            host: 2,
            [
                "curl", "-sS", "-m", "15", "-H", "Origin: \(base)", "--data-urlencode", "id=abc",
                base + "/api/request",
            ], timeout: .seconds(20))
        let answer = parseJSON(posted.stdout) as? [String: Any] ?? [:]
        #expect(answer["status"] as? String == "unknown_track", "\(posted.stdout) \(posted.stderr)")
    }
}
