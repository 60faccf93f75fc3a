import Foundation
import Testing

/// The end-to-end slice on a namespace LAN, driving the real binary: discovery, join, skip and
/// pause propagation, votes, liveness, name conflicts and a missing avahi-daemon.
@Suite(
    "Station on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct StationLANTests {
    @Test("Discovered, joined, skip and pause propagate, votes counted once")
    func discoverJoinControlVote() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop")

        // Another host lists it, with what it plays.
        let listing = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect(listing.exit == 0)
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]])
        #expect(stations.count == 1)
        #expect(stations.first?["name"] as? String == "Rooftop")
        #expect((stations.first?["now_playing"] as? [String: Any])?["title"] as? String != nil)
        let table = try lan.partyradio(host: 2, ["stations"], role: "observer")
        #expect(table.stdout.contains("Rooftop") && table.stdout.contains("STATION"))

        // A listener on a third host tunes in; the DJ counts it.
        let listener = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        let tuned = try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        #expect(((tuned["station"] as? [String: Any])?["name"]) as? String == "Rooftop")
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" && $0.int("listeners") == 1 }

        // Skip, pause and resume reach the listener within a snapshot interval.
        var mark = listener.events.count
        let skipAt = realTimeNs()
        dj.send("next")
        let skipped = try listener.waitForEvent(after: mark, timeout: .seconds(2), "track change") {
            $0.name == "state" && $0.string("change") == "track" && $0.int("queue_index") == 1
        }
        #expect(skipped.timeNs - skipAt < 1_000_000_000)
        mark = listener.events.count
        dj.send("pause")
        let paused = try listener.waitForEvent(after: mark, timeout: .seconds(2), "pause") {
            $0.string("change") == "paused"
        }
        #expect(paused["paused"] as? Bool == true)
        Thread.sleep(forTimeInterval: 0.6)
        let stillPaused = listener.events.last { $0.name == "progress" || $0.name == "state" }
        #expect(stillPaused?.int("position_ms") == paused.int("position_ms"))
        mark = listener.events.count
        dj.send("resume")
        try listener.waitForEvent(after: mark, timeout: .seconds(2), "resume") { $0.string("change") == "resumed" }

        // Votes from two hosts; a repeated vote is not counted twice; a vote can change.
        let up = try lan.partyradio(host: 2, ["vote", "up", "--json"], role: "voter")
        #expect(up.exit == 0, "\(up.stderr)")
        let upResult = try #require(parseJSON(up.stdout) as? [String: Any])
        #expect(upResult["up"] as? Int == 1 && upResult["down"] as? Int == 0 && upResult["listeners"] as? Int == 1)
        #expect(upResult["track_id"] as? String == skipped.string("track_id"))
        let again = try #require(
            parseJSON(try lan.partyradio(host: 2, ["vote", "up", "--json", "--station", "roof"], role: "voter").stdout)
                as? [String: Any])
        #expect(again["up"] as? Int == 1)
        let down = try #require(
            parseJSON(try lan.partyradio(host: 3, ["vote", "down", "--json"], role: "listener").stdout)
                as? [String: Any])
        #expect(down["up"] as? Int == 1 && down["down"] as? Int == 1)
        let changed = try #require(
            parseJSON(try lan.partyradio(host: 2, ["vote", "down", "--json"], role: "voter").stdout) as? [String: Any])
        #expect(changed["up"] as? Int == 0 && changed["down"] as? Int == 2)
        let text = try lan.partyradio(host: 2, ["vote", "clear"], role: "voter")
        #expect(text.exit == 0 && text.stdout.contains("1 down"))
        try listener.waitForEvent("tally reaches the listener") {
            $0.string("change") == "votes" && $0.int("down") == 1 && $0.int("up") == 0
        }

        // Tallies reset on a track change.
        dj.send("next")
        try dj.waitForEvent("next track") { $0.string("change") == "track" && $0.int("queue_index") == 2 }
        let fresh = try #require(
            parseJSON(try lan.partyradio(host: 2, ["vote", "up", "--json"], role: "voter").stdout) as? [String: Any])
        #expect(fresh["up"] as? Int == 1 && fresh["down"] as? Int == 0)

        // A listener that leaves is no longer counted; the DJ's clean exit reaches everyone.
        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
        try dj.waitForEvent("listener left") { $0.name == "listener_left" && $0.int("listeners") == 0 }
        let watcher = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "stations", "--watch", "--json", "--state-dir", lan.stateDir("watcher")])
        try watcher.waitForEvent("appeared") { $0.name == "appeared" }
        let quitAt = realTimeNs()
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
        let gone = try watcher.waitForEvent(timeout: .seconds(3), "vanished") { $0.name == "vanished" }
        #expect(gone.timeNs - quitAt < 1_000_000_000, "a clean exit disappears at once")
        watcher.kill()
    }

    @Test("Crowd skip: two down votes of a room of two skip the track after 10 s, and every node says why")
    func crowdSkip() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Both voters share host 3: the DJ counts two voters per address here. Host 3 listens too, so
        // its votes weigh once it has listened 5 s, well inside the track's first 10 s.
        let dj = try lan.startDJ(
            host: 1, name: "Crowd",
            extra: ["--crowd-skip", "50", "--voters-per-address", "2", "--vote-weight-after", "5"])
        let listener = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        let voters = try lan.spawn(
            host: 3,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l3")])
        defer { voters.kill(signal: SIGINT) }
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        try voters.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        // Two down votes early in the track: nothing happens in its first 10 s, then it is skipped.
        #expect(try lan.partyradio(host: 3, ["vote", "down"], role: "v1").exit == 0)
        #expect(try lan.partyradio(host: 3, ["vote", "down"], role: "v2").exit == 0)
        try listener.waitForEvent(timeout: .seconds(20), "9.5 s into the track") {
            $0.name == "progress" && ($0.int("position_ms") ?? 0) > 9_500 && $0.int("queue_index") == 0
        }
        #expect(!listener.events.contains { $0.name == "track_skipped" }, "skipped in the first 10 s")
        let notice = try listener.waitForEvent(timeout: .seconds(3), "track_skipped") { $0.name == "track_skipped" }
        #expect(notice.string("reason") == "crowd")
        #expect(notice.int("down") == 2 && notice.int("room") == 2)
        let before = listener.events.last { $0.name == "progress" && $0.int("queue_index") == 0 }
        #expect((before?.int("position_ms") ?? 0) >= 9_700)
        try listener.waitForEvent(timeout: .seconds(2), "next track") {
            $0.name == "state" && $0.string("change") == "track" && $0.int("queue_index") == 1 && $0.int("down") == 0
        }
        try dj.waitForEvent("dj says why") { $0.name == "track_skipped" && $0.string("reason") == "crowd" }
        #expect(listener.events.filter { $0.name == "track_skipped" }.count == 1, "the notice is said once")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("DJ stats: a voted and skipped track is kept across runs; stats shows the latest night, --all every night")
    func djStats() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Stats")
        let listener = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        #expect(try lan.partyradio(host: 3, ["vote", "up"], role: "voter").exit == 0)
        let vote = try dj.waitForEvent("vote counted") { $0.name == "vote_counted" && $0.int("up") == 1 }
        dj.send("next")
        let skip = try dj.waitForEvent("skipped") { $0.name == "track_skipped" && $0.string("reason") == "dj" }
        #expect(skip.string("track_id") == vote.string("track_id"))
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)

        // On the DJ's host, with its state directory: the night, the track with its vote and its skip.
        let stats = try lan.partyradio(host: 1, ["stats", "--json"], role: "dj")
        #expect(stats.exit == 0, "\(stats.stderr)")
        let nights = try #require((parseJSON(stats.stdout) as? [String: Any])?["nights"] as? [[String: Any]])
        #expect(nights.count == 1)
        let night = try #require(nights.first)
        #expect(night["station"] as? String == "Stats" && night["ended_at"] is String)
        let tracks = night["tracks"] as? [[String: Any]] ?? []
        let played = try #require(tracks.first { $0["track_id"] as? String == vote.string("track_id") }, "\(tracks)")
        #expect(played["up"] as? Int == 1 && played["down"] as? Int == 0)
        #expect(played["dj_skips"] as? Int == 1 && played["plays"] as? Int == 1)
        #expect(played["listeners_at_start"] as? Int == 0, "the DJ started before the listener tuned in")
        // The track after the skip started with the listener in the room, and the quit stopped it.
        #expect(tracks.count == 2, "\(tracks)")
        #expect(tracks.last?["listeners_at_start"] as? Int == 1 && tracks.last?["skips"] as? Int == 0)
        #expect((night["best"] as? [String: Any])?["track_id"] as? String == vote.string("track_id"))
        let table = try lan.partyradio(host: 1, ["stats"], role: "dj")
        #expect(table.stdout.contains("Night 1: Stats") && table.stdout.contains("Best:"), "\(table.stdout)")

        // A second night on the same state directory: the default shows it alone, --all both.
        let again = try lan.startDJ(host: 1, name: "Stats Again")
        again.send("quit")
        #expect(again.wait(timeout: .seconds(5)) == 0)
        let latest = try lan.partyradio(host: 1, ["stats", "--json"], role: "dj")
        let latestNights = (parseJSON(latest.stdout) as? [String: Any])?["nights"] as? [[String: Any]]
        #expect(latestNights?.map { $0["station"] as? String } == ["Stats Again"])
        let all = try lan.partyradio(host: 1, ["stats", "--json", "--all"], role: "dj")
        let allNights = (parseJSON(all.stdout) as? [String: Any])?["nights"] as? [[String: Any]]
        #expect(allNights?.map { $0["station"] as? String } == ["Stats", "Stats Again"], "\(all.stdout)")
        listener.kill(signal: SIGINT)
    }

    @Test("Guests' names: the DJ's listener list and stations --json show them; a vanished guest leaves the list")
    func guestNames() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Names")
        func listen(_ host: Int, _ name: String, _ role: String) throws -> TestbedProcess {
            let listener = try lan.spawn(
                host: host,
                [
                    Testbed.partyradioBinary, "listen", "--as", name, "--json-events", "--no-audio", "--state-dir",
                    lan.stateDir(role),
                ])
            try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
            return listener
        }
        let alice = try listen(2, "Alice", "alice")
        let bob = try listen(3, "Bob 🎸", "bob")
        func names(_ event: Event) -> Set<String> {
            Set((event["names"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        }
        let both = try dj.waitForEvent("roster of two") { $0.name == "roster" && $0.int("listeners") == 2 }
        #expect(names(both) == ["Alice", "Bob 🎸"])
        let listing = try lan.partyradio(host: 3, ["stations", "--json"], role: "observer")
        let station = try #require((parseJSON(listing.stdout) as? [[String: Any]])?.first)
        let listed = Set((station["listener_names"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        #expect(listed == ["Alice", "Bob 🎸"], "\(listing.stdout)")
        // Bob's process dies without a word: within the roster timeout the DJ lists Alice alone.
        bob.kill(signal: SIGKILL)
        let mark = dj.events.count
        let one = try dj.waitForEvent(after: mark, timeout: .seconds(6), "roster of one") {
            $0.name == "roster" && $0.int("listeners") == 1
        }
        #expect(names(one) == ["Alice"])
        let after = try lan.partyradio(host: 3, ["stations", "--json"], role: "observer")
        let stationAfter = try #require((parseJSON(after.stdout) as? [[String: Any]])?.first)
        #expect((stationAfter["listener_names"] as? [[String: Any]])?.count == 1)
        #expect(stationAfter["listeners"] as? Int == 1)
        // A name that is not plain text is refused before anything starts.
        let bad = try lan.partyradio(host: 2, ["listen", "--as", String(repeating: "x", count: 33)], role: "bad")
        #expect(bad.exit == 2 && bad.stderr.contains("at most 32"))
        alice.kill(signal: SIGINT)
        _ = alice.wait(timeout: .seconds(5))
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Chat: a line reaches the DJ and every listener once; too long, too fast and muted are refused")
    func chat() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Chatty")
        let listener = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "listen", "--as", "Alice", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("alice"),
            ])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        let said = try lan.partyradio(host: 3, ["chat", "--as", "Bob", "great", "track!"], role: "bob")
        #expect(said.exit == 0 && said.stdout.contains("Said to 'Chatty' as Bob"), "\(said.stderr)")
        let heard = try listener.waitForEvent(timeout: .seconds(2), "chat") { $0.name == "chat" }
        #expect(heard.string("name") == "Bob" && heard.string("text") == "great track!")
        try dj.waitForEvent("chat at the DJ") { $0.name == "chat" && $0.string("text") == "great track!" }
        // Escape sequences never reach anyone's terminal; an over-long line is refused at once.
        let sneaky = try lan.partyradio(host: 3, ["chat", "--as", "Bob", "hi\u{1B}[2J there"], role: "bob")
        #expect(sneaky.exit == 0)
        // The whole sequence goes, not its ESC alone.
        try listener.waitForEvent("cleaned chat") { $0.name == "chat" && $0.string("text") == "hi there" }
        let long = try lan.partyradio(host: 3, ["chat", String(repeating: "a", count: 281)], role: "bob")
        #expect(long.exit == 2 && long.stderr.contains("at most 280"))
        // Five lines per 10 s per guest: Bob has said two; three more pass, the sixth is refused.
        for n in 3...5 {
            #expect(try lan.partyradio(host: 3, ["chat", "--as", "Bob", "line \(n)"], role: "bob").exit == 0)
        }
        let flood = try lan.partyradio(host: 3, ["chat", "--as", "Bob", "line 6", "--json"], role: "bob")
        #expect(flood.exit == 1 && flood.stderr.contains("at most 5 lines per 10 s"), "\(flood.stderr)")
        #expect((parseJSON(flood.stdout) as? [String: Any])?["status"] as? String == "rate_limited")
        // The DJ mutes Bob by name; Alice still chats.
        dj.send("mute Bob")
        try dj.waitForEvent("muted") { $0.name == "notice" && ($0.string("message") ?? "").contains("Muted 'Bob'") }
        Thread.sleep(forTimeInterval: 0.2)
        let muted = try lan.partyradio(host: 3, ["chat", "--as", "Bob", "let me in"], role: "bob")
        #expect(muted.exit == 1 && muted.stderr.contains("muted"), "\(muted.stderr)")
        #expect(try lan.partyradio(host: 2, ["chat", "hello from alice"], role: "alice2").exit == 0)
        try listener.waitForEvent("alice's line") { $0.name == "chat" && $0.string("text") == "hello from alice" }
        // Each line shown once, though the DJ sends every line twice.
        let lines = listener.events.filter { $0.name == "chat" }.compactMap { $0.string("text") }
        #expect(lines == ["great track!", "hi there", "line 3", "line 4", "line 5", "hello from alice"])
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Queue controls: repeat one plays a track again, repeat off stops after the last, shuffle and volume")
    func queueControls() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Three 3-second tracks, so that track ends come quickly.
        let library = lan.stateDir("library")
        let script = """
            import math, struct, sys, wave
            for n in range(3):
                with wave.open(f"{sys.argv[1]}/track{n}.wav", "wb") as w:
                    w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
                    w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i * (n + 1) / 20)))
                                           for i in range(3 * 8000)))
            """
        #expect(try lan.run(host: 1, ["python3", "-c", script, library]).exit == 0)
        let dj = try lan.startDJ(host: 1, name: "Loop", extra: ["--library", library])
        try dj.waitForEvent("settings") { $0.name == "dj_settings" && $0.string("repeat") == "all" }
        let listener = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }

        // Repeat one: the track that ends starts again from the top (listeners see it restart).
        dj.send("repeat one")
        try dj.waitForEvent("repeat one") { $0.name == "dj_settings" && $0.string("repeat") == "one" }
        var mark = listener.events.count
        let late = try listener.waitForEvent(after: mark, timeout: .seconds(5), "the end of a track") {
            $0.name == "progress" && ($0.int("position_ms") ?? 0) > 2_500
        }
        let again = try listener.waitForEvent(after: mark, timeout: .seconds(3), "the same track again") {
            $0.name == "state" && $0.timeNs > late.timeNs && ($0.int("position_ms") ?? 9_999) < 1_000
        }
        #expect(again.string("track_id") == late.string("track_id"))
        #expect(again.int("queue_index") == late.int("queue_index"))

        // Repeat off: after the last track the station stops, paused at its end.
        dj.send("repeat off")
        dj.send("seek 0")
        for _ in 0..<3
        where (listener.events.last { $0.name == "state" || $0.name == "progress" })?.int("queue_index") != 2 {
            dj.send("next")
            Thread.sleep(forTimeInterval: 0.3)
        }
        mark = listener.events.count
        let stopped = try listener.waitForEvent(after: mark, timeout: .seconds(6), "stopped at the end") {
            $0.name == "state" && $0.string("change") == "paused"
        }
        #expect(stopped.int("queue_index") == 2 && stopped["paused"] as? Bool == true)

        // Shuffle and volume answer on the DJ.
        dj.send("repeat all")
        dj.send("next")
        dj.send("shuffle")
        try dj.waitForEvent("shuffled") { $0.name == "notice" && ($0.string("message") ?? "").hasPrefix("Shuffled") }
        dj.send("volume 40")
        try dj.waitForEvent("volume") { $0.name == "dj_settings" && $0.int("volume") == 40 }
        dj.send("volume +100")
        try dj.waitForEvent("volume clamped") { $0.name == "dj_settings" && $0.int("volume") == 100 }
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Votes are counted exactly once with 30% loss on the DJ's host")
    func votesUnderLoss() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Six voters on one host: a shared machine, as far as the DJ can tell.
        let dj = try lan.startDJ(host: 1, name: "Lossy", extra: ["--voters-per-address", "6"])
        // Paused, so that one track stays on however long twelve votes through 30 % loss take
        // (a new track starts a new tally).
        dj.send("pause")
        try dj.waitForEvent("paused") { $0.name == "state" && $0.string("change") == "paused" }
        try lan.loss(host: 1, percent: 30, direction: .both)
        for voter in 1...6 {
            let result = try lan.partyradio(
                host: 2, ["vote", "up", "--json", "--timeout", "20"], role: "voter\(voter)", timeout: .seconds(40))
            #expect(result.exit == 0, "voter \(voter): \(result.stderr)")
            let json = parseJSON(result.stdout) as? [String: Any]
            #expect(json?["up"] as? Int == voter)
            // The same voter again: still counted once.
            let repeated = try lan.partyradio(
                host: 2, ["vote", "up", "--json", "--timeout", "20"], role: "voter\(voter)", timeout: .seconds(40))
            #expect((parseJSON(repeated.stdout) as? [String: Any])?["up"] as? Int == voter)
        }
        try lan.loss(host: 1, percent: 0)
        let counted = dj.events.filter { $0.name == "vote_counted" }
        #expect(counted.count == 6)
        #expect(counted.last?.int("up") == 6)
    }

    @Test("A DJ whose host drops off leaves every listing within 3 s; listeners say it went silent")
    func hostDropsOff() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Fragile")  // kept: a dropped handle kills its process
        defer { withExtendedLifetime(dj) {} }
        let watcher = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "stations", "--watch", "--json", "--state-dir", lan.stateDir("watcher")])
        try watcher.waitForEvent("appeared") { $0.name == "appeared" }
        let listener = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "Fragile", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        try listener.waitForEvent("tuned in") { $0.name == "tuned_in" }

        let pulledAt = realTimeNs()
        try lan.linkDown(host: 1)
        let vanished = try watcher.waitForEvent(timeout: .seconds(5), "vanished") { $0.name == "vanished" }
        #expect(vanished.timeNs - pulledAt < 3_000_000_000)
        #expect(vanished.string("reason") == "went silent")
        let silent = try listener.waitForEvent(timeout: .seconds(5), "silent") { $0.name == "station_silent" }
        #expect(silent.timeNs - pulledAt < 3_000_000_000)

        // A freshly started listing does not show it, although Avahi still has its records.
        let fresh = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect(fresh.exit == 0)
        #expect((parseJSON(fresh.stdout) as? [Any])?.count == 0, "\(fresh.stdout)")

        // Cable back in: the station returns to the listener.
        try lan.linkUp(host: 1)
        try listener.waitForEvent(timeout: .seconds(10), "back") { $0.name == "station_back" }
        watcher.kill()
        listener.kill()
    }

    @Test("kill -9 of the DJ; a silent listener stops being counted")
    func killedProcesses() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Doomed")
        let listener = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        try dj.waitForEvent("joined") { $0.name == "listener_joined" }
        listener.kill(signal: SIGKILL)
        let left = try dj.waitForEvent(timeout: .seconds(6), "silent listener dropped") {
            $0.name == "listener_left" && $0.int("listeners") == 0
        }
        #expect(left.int("listeners") == 0)

        let listener2 = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        try listener2.waitForEvent("tuned in") { $0.name == "tuned_in" }
        let watcher = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "stations", "--watch", "--json", "--state-dir", lan.stateDir("watcher")])
        try watcher.waitForEvent("appeared") { $0.name == "appeared" }
        let killedAt = realTimeNs()
        dj.kill(signal: SIGKILL)
        let vanished = try watcher.waitForEvent(timeout: .seconds(5), "vanished") { $0.name == "vanished" }
        #expect(vanished.timeNs - killedAt < 3_000_000_000)
        let silentOrGone = try listener2.waitForEvent(timeout: .seconds(5), "silent or gone") {
            $0.name == "station_silent" || $0.name == "station_gone"
        }
        #expect(silentOrGone.timeNs - killedAt < 3_000_000_000)
        watcher.kill()
        listener2.kill()
    }

    @Test("A name conflict takes Avahi's alternative name, and the DJ says so")
    func nameConflict() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let first = try lan.startDJ(host: 1, name: "Twin")
        let second = try lan.startDJ(host: 2, name: "Twin", role: "dj2")
        let renamed = (first.events + second.events).filter { $0.name == "station_renamed" }
        #expect(renamed.count == 1)
        #expect(renamed.first?.string("to") == "Twin #2")
        var names: [String] = []
        for _ in 0..<20 where names.count < 2 {
            let listing = try lan.partyradio(host: 3, ["stations", "--json"], role: "observer")
            names = ((parseJSON(listing.stdout) as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
                .sorted()
        }
        #expect(names == ["Twin", "Twin #2"])
        let ambiguous = try lan.partyradio(host: 3, ["vote", "up", "--timeout", "5"], role: "observer")
        #expect(ambiguous.exit == 2 && ambiguous.stderr.contains("Several stations"))
        let exact = try lan.partyradio(host: 3, ["vote", "up", "--station", "Twin #2", "--json"], role: "observer")
        #expect((parseJSON(exact.stdout) as? [String: Any])?["station"] as? String == "Twin #2")
    }

    @Test("Without avahi-daemon every command says so in one sentence, with the fix")
    func avahiAbsent() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        try lan.stopAvahi(host: 1)
        for args in [
            ["stations"], ["dj", "--name", "Nope", "--no-audio"], ["listen", "--no-audio"], ["vote", "up"],
            ["request", "blue hour"], ["queue"],
        ] {
            let result = try lan.partyradio(host: 1, args, role: "node")
            #expect(result.exit == 1, "\(args)")
            #expect(result.stderr.hasPrefix("Error: avahi-daemon is not reachable"), "\(args): \(result.stderr)")
            #expect(result.stderr.contains("start"))
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        let missing = try lan.partyradio(host: 1, ["vote", "up", "--timeout", "1"], role: "node")
        #expect(missing.exit == 1)
    }

    @Test("A station seen in the last minute is asked at once, before mDNS answers")
    func recentStationIsAskedAtOnce() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Quick")
        defer { withExtendedLifetime(dj) {} }
        let listing = try lan.partyradio(host: 2, ["stations"], role: "guest")
        #expect(listing.stdout.contains("Quick"))
        // With the sighting: the station is resolved (from it) before mDNS has even found the service.
        func tuneIn() throws -> [String] {
            let listener = try lan.spawn(
                host: 2,
                [
                    Testbed.partyradioBinary, "listen", "Quick", "--no-audio", "--json-events", "-v", "--state-dir",
                    lan.stateDir("guest"),
                ])
            try listener.waitForEvent("tuned in") { $0.name == "tuned_in" }
            Thread.sleep(forTimeInterval: 0.5)  // long enough for mDNS's own answer to be logged too
            listener.kill()
            _ = listener.wait(timeout: .seconds(5))
            return listener.readLines(.stderr).filter { $0.contains("[discovery]") }
        }
        func order(_ lines: [String]) -> (resolved: Int, found: Int) {
            (
                lines.firstIndex { $0.contains("resolved 'Quick'") } ?? .max,
                lines.firstIndex { $0.contains("found service 'Quick'") } ?? .max
            )
        }
        let warm = order(try tuneIn())
        #expect(warm.resolved < warm.found, "the recent sighting was not used: \(warm)")
        try FileManager.default.removeItem(atPath: lan.stateDir("guest") + "/recent_stations")
        // Without it, the name is resolved through mDNS at once (SRV and TXT by the instance name),
        // not after browsing has found the service: no "found service" comes before it.
        let coldLines = try tuneIn()
        let cold = order(coldLines)
        #expect(cold.resolved < .max && cold.resolved < cold.found, "not resolved by its name at once: \(cold)")
        // The one-shot mDNS question (docs/PROTOCOL.md) was answered by the DJ's avahi-daemon.
        #expect(coldLines.contains { $0.contains("one-shot mDNS answer for 'Quick'") }, "\(coldLines)")
        // `vote --station NAME` asks the same way.
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--station", "Quick", "-v"], role: "voter")
        #expect(vote.exit == 0, "\(vote.stderr)")
        #expect(vote.stderr.contains("one-shot mDNS answer for 'Quick'"), "\(vote.stderr)")
    }

    @Test("No station: listen and vote time out with exit code 3")
    func nothingOnTheAir() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let vote = try lan.partyradio(host: 1, ["vote", "up", "--timeout", "1.5"], role: "node")
        #expect(vote.exit == 3)
        #expect(vote.stderr.hasPrefix("Error: No station found"))
        let listen = try lan.partyradio(host: 1, ["listen", "Ghost", "--timeout", "1.5", "--no-audio"], role: "node")
        #expect(listen.exit == 3)
        #expect(listen.stderr.contains("No station matches 'Ghost'"))
        let stations = try lan.partyradio(host: 1, ["stations", "--timeout", "1"], role: "node")
        #expect(stations.exit == 0 && stations.stdout.contains("No stations"))
        for args in [["request", "blue hour"], ["queue"], ["vote", "up", "--request", "1"]] {
            let result = try lan.partyradio(host: 1, args + ["--timeout", "1"], role: "node")
            #expect(result.exit == 3 && result.stderr.hasPrefix("Error: No station found"), "\(args): \(result.stderr)")
        }
    }

    @Test("Malformed, unknown-version, oversized and forged datagrams are dropped and counted; nothing stalls")
    func hostileDatagrams() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Both nodes run with -v: the drops, discovery and clock show up as diagnostics on stderr.
        let dj = try lan.startDJ(host: 1, name: "Sturdy", extra: ["-v"])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let address = try #require(started.string("address"))
        let port = try #require(started.int("port"))
        let group = try #require(started.string("group")).split(separator: ":")
        let listener = try lan.spawn(
            host: 3,
            [
                Testbed.partyradioBinary, "listen", "-v", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("l"),
            ],
            stdin: true)
        try listener.waitForEvent("tuned in") { $0.name == "tuned_in" }
        // Random bytes, a header of an unknown version, an unknown kind, a truncated header, an
        // oversized datagram, and a "goodbye" with a bad signature: to the DJ and to the group.
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
            station = bytes.fromhex(sys.argv[5])
            forged = b"PR\\x01\\x07" + station + os.urandom(40) + b"\\x00" + os.urandom(64)
            bad = [os.urandom(100), b"PR\\x09\\x01" + os.urandom(120), b"PR\\x01\\xee" + os.urandom(120),
                   b"PR\\x01", os.urandom(1500), forged]
            for target in [(sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))]:
                for _ in range(20):
                    for datagram in bad:
                        s.sendto(datagram, target)
            """
        let sent = try lan.run(
            host: 2,
            [
                "python3", "-c", script, address, String(port), String(group[0]), String(group[1]),
                try #require(started.string("id")),
            ])
        #expect(sent.exit == 0, "\(sent.stderr)")
        // Both still work: a vote is counted and reaches the listener.
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--json"], role: "voter")
        #expect(vote.exit == 0)
        try listener.waitForEvent("tally") { $0.string("change") == "votes" && $0.int("up") == 1 }
        #expect(!listener.events.contains { $0.name == "station_gone" }, "a forged goodbye must not end the listener")
        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
        let listenerDrops = try #require(
            listener.events.last { $0.name == "listener_stopped" }?["dropped"] as? [String: Int])
        #expect(listenerDrops.values.reduce(0, +) >= 100, "\(listenerDrops)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
        let drops = try #require(dj.events.last { $0.name == "station_stopped" }?["dropped"] as? [String: Int])
        #expect(drops["unknown_version"] == 20 && drops["unknown_kind"] == 20 && drops["oversized"] == 20, "\(drops)")
        #expect(drops.values.reduce(0, +) >= 100, "\(drops)")
        // -v: timestamped diagnostics, one per line, on stderr only.
        let djLog = dj.text(.stderr)
        let listenerLog = listener.text(.stderr)
        #expect(djLog.contains("[wire] dropped a datagram"), "\(djLog.prefix(2000))")
        #expect(listenerLog.contains("[discovery] resolved"), "\(listenerLog.prefix(2000))")
        #expect(listenerLog.contains("[clock] synchronised"), "\(listenerLog.prefix(2000))")
        let stamped = listenerLog.split(separator: "\n").filter { $0.contains("[discovery]") }
        #expect(!stamped.isEmpty && stamped.allSatisfy { $0.first?.isNumber == true && $0.contains("Z [") })
        #expect(!dj.text(.stdout).contains("[wire]"))
    }
}
