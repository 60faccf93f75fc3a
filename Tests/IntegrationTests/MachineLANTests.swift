import Foundation
import Testing

/// One hostile machine with 64 addresses on its one interface (issue 27, attacks 3 and 4), against
/// the real DJ: the DJ counts voters, chat rates and mutes per machine — the sender's link-layer
/// address in the DJ's neighbour table — so fresh keys from the aliases are one guest. The hostile
/// guest is `scripts/alias-guest.py` (real signed datagrams, a fresh key for each, from each alias).
@Suite(
    "One machine, many addresses", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct MachineLANTests {
    static var aliasGuest: String { Testbed.repoRoot.appendingPathComponent("scripts/alias-guest.py").path }

    /// Gives `host` `count` more addresses on its eth0, in its own /24 (or /64 on an IPv6-only LAN);
    /// returns them.
    static func addAliases(_ lan: Testbed, host: Int, count: Int) throws -> [String] {
        let own = try lan.ip(host: host)
        let v6 = own.contains(":")
        let prefix = own.split(separator: v6 ? ":" : ".", omittingEmptySubsequences: false).dropLast()
            .joined(separator: v6 ? ":" : ".")
        let aliases = (0..<count).map { v6 ? "\(prefix):\(String(256 + $0, radix: 16))" : "\(prefix).\(100 + $0)" }
        let script = aliases.map { v6 ? "ip addr add \($0)/64 dev eth0 nodad" : "ip addr add \($0)/24 dev eth0" }
            .joined(separator: " && ")
        let added = try lan.run(host: host, ["sh", "-c", script])
        #expect(added.exit == 0, "\(added.stderr)")
        return aliases
    }

    /// The station's address, port and ID, as the DJ reported them.
    static func station(_ dj: TestbedProcess) throws -> [String] {
        let started = try dj.waitForEvent("station_started") { $0.name == "station_started" }
        return [
            try #require(started.string("address")), String(try #require(started.int("port"))),
            try #require(started.string("id")),
        ]
    }

    static func counts(_ output: String) -> [String: Int] {
        let line = output.split(separator: "\n").last.map(String.init) ?? ""
        return (parseJSON(line) as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.intValue } ?? [:]
    }

    @Test("64 fresh keys from 64 addresses of one machine count as one voter and make no crowd skip")
    func aliasesAreOneVoter() throws {
        let lan = try Testbed(hosts: 4)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Aliases", extra: ["--crowd-skip", "50"])
        let station = try Self.station(dj)
        // Two real listeners.
        let listeners = try [3, 4].map { host in
            try lan.spawn(
                host: host,
                [
                    Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                    lan.stateDir("listener\(host)"),
                ])
        }
        defer { for listener in listeners { listener.kill(signal: SIGINT) } }
        for listener in listeners { try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" } }
        try dj.waitForEvent("two listeners") { $0.name == "listener_joined" && $0.int("listeners") == 2 }
        let track = try #require(
            dj.events.last { $0.name == "state" && $0.string("track_id") != nil }?.string("track_id"))

        let aliases = try Self.addAliases(lan, host: 2, count: 64)
        let vote = try lan.run(
            host: 2, ["python3", Self.aliasGuest, "vote"] + station + [track, "down"] + aliases, timeout: .seconds(30))
        #expect(vote.exit == 0, "\(vote.stderr)")
        let counts = Self.counts(vote.stdout)
        print("64 aliases of one machine voting down with fresh keys: \(vote.stdout)")
        #expect(counts["counted"] == 1, "one machine, one voter: \(vote.stdout)")
        #expect(counts["address_limit"] == 63, "\(vote.stdout)")
        let counted = dj.events.filter { $0.name == "vote_counted" }
        #expect(counted.count == 1 && counted.last?.int("down") == 1)

        // Past the crowd skip's first 10 s: one down vote of a room of two skips nothing.
        try listeners[0].waitForEvent(timeout: .seconds(20), "11 s into the track") {
            $0.name == "progress" && ($0.int("position_ms") ?? 0) > 11_000 && $0.int("queue_index") == 0
        }
        #expect(!dj.events.contains { $0.name == "track_skipped" }, "a crowd skip on demand")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    /// Votes weigh after listening: 64 fresh keys from 64 addresses, each counted (as 64 machines
    /// with spoofed link-layer addresses would be: `--voters-per-address 64` here), never listened
    /// and skip nothing; two real listeners' down votes, once they have listened 5 s, do.
    @Test("64 counted votes from machines that never listened make no crowd skip; two real listeners' do")
    func freshMachinesDoNotWeigh() throws {
        let lan = try Testbed(hosts: 4)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(
            host: 1, name: "Weigh",
            extra: ["--crowd-skip", "50", "--voters-per-address", "64", "--vote-weight-after", "5"])
        let station = try Self.station(dj)
        let listeners = try [3, 4].map { host in
            try lan.spawn(
                host: host,
                [
                    Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                    lan.stateDir("listener\(host)"),
                ])
        }
        defer { for listener in listeners { listener.kill(signal: SIGINT) } }
        for listener in listeners { try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" } }
        try dj.waitForEvent("two listeners") { $0.name == "listener_joined" && $0.int("listeners") == 2 }
        let track = try #require(
            dj.events.last { $0.name == "state" && $0.string("track_id") != nil }?.string("track_id"))

        let aliases = try Self.addAliases(lan, host: 2, count: 64)
        let vote = try lan.run(
            host: 2, ["python3", Self.aliasGuest, "vote"] + station + [track, "down"] + aliases, timeout: .seconds(30))
        #expect(vote.exit == 0, "\(vote.stderr)")
        print("64 aliases, never listening, voting down: \(vote.stdout)")
        #expect(Self.counts(vote.stdout)["counted"] == 64, "\(vote.stdout)")
        let tallied = dj.events.last { $0.name == "vote_counted" }
        #expect(tallied?.int("down") == 64, "the tally shows every counted vote")

        // Past the crowd skip's first 10 s: 64 of a room of 66 down, none weighing, skip nothing.
        try listeners[0].waitForEvent(timeout: .seconds(20), "11 s into the track") {
            $0.name == "progress" && ($0.int("position_ms") ?? 0) > 11_000 && $0.int("queue_index") == 0
        }
        #expect(!dj.events.contains { $0.name == "track_skipped" }, "votes from machines that never listened skipped")

        // The listeners have listened more than 5 s: their down votes (from their machines) skip.
        for host in [3, 4] {
            #expect(try lan.partyradio(host: host, ["vote", "down"], role: "listener\(host)").exit == 0)
        }
        let skipped = try dj.waitForEvent(timeout: .seconds(5), "crowd skip") {
            $0.name == "track_skipped" && $0.string("reason") == "crowd"
        }
        #expect(skipped.int("down") == 2 && skipped.int("room") == 2, "only the weighing votes make the room")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    /// Listener stuffing: one machine's 22 fresh-key listeners (a hello a second from each of 22
    /// aliases) are 22 on the DJ's list but one in crowd skip's room, so two real listeners' down
    /// votes are still two of a room of three and skip the track (with the room counted in keys,
    /// 2 of 24 skipped nothing).
    @Test("22 listeners from one machine's aliases are one in crowd skip's room; two real down votes skip")
    func aliasListenersAreOneInTheRoom() throws {
        let lan = try Testbed(hosts: 4)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(
            host: 1, name: "Stuffed", extra: ["--crowd-skip", "50", "--vote-weight-after", "0"])
        let station = try Self.station(dj)
        let listeners = try [3, 4].map { host in
            try lan.spawn(
                host: host,
                [
                    Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                    lan.stateDir("listener\(host)"),
                ])
        }
        defer { for listener in listeners { listener.kill(signal: SIGINT) } }
        for listener in listeners { try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" } }
        let aliases = try Self.addAliases(lan, host: 2, count: 22)
        let stuffer = try lan.spawn(
            host: 2, ["python3", Self.aliasGuest, "listen"] + station + ["60"] + aliases)
        defer { stuffer.kill(signal: SIGINT) }
        try dj.waitForEvent(timeout: .seconds(20), "24 listeners") {
            $0.name == "listener_joined" && $0.int("listeners") == 24
        }
        // Past the crowd skip's first 10 s of a track, with time left to vote (the shortest is 20 s).
        try listeners[0].waitForEvent(after: listeners[0].events.count, timeout: .seconds(60), "11 s into a track") {
            $0.name == "progress" && (11_001..<14_000).contains($0.int("position_ms") ?? 0)
        }
        #expect(dj.events.last { $0.name.hasPrefix("listener_") }?.int("listeners") == 24, "every listener listed")
        for host in [3, 4] {
            #expect(try lan.partyradio(host: host, ["vote", "down"], role: "listener\(host)").exit == 0)
        }
        let skipped = try dj.waitForEvent(timeout: .seconds(5), "crowd skip") {
            $0.name == "track_skipped" && $0.string("reason") == "crowd"
        }
        print(
            "crowd skip with 22 listeners from one machine: \(skipped.int("down") ?? -1) of \(skipped.int("room") ?? -1)"
        )
        #expect(skipped.int("down") == 2 && skipped.int("room") == 3, "one machine, one listener in the room")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("IPv6 only: 16 fresh keys from 16 addresses of one machine count as one voter (its NDP entries)")
    func ipv6AliasesAreOneVoter() throws {
        let lan = try Testbed(hosts: 2, ip: .v6)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Six")
        let station = try Self.station(dj)
        #expect(station[0].contains(":"), "\(station)")
        let track = try #require(
            try dj.waitForEvent("state") { $0.name == "state" && $0.string("track_id") != nil }.string("track_id"))
        let aliases = try Self.addAliases(lan, host: 2, count: 16)
        let vote = try lan.run(
            host: 2, ["python3", Self.aliasGuest, "vote"] + station + [track, "up"] + aliases, timeout: .seconds(30))
        print("16 IPv6 aliases of one machine voting up with fresh keys: \(vote.stdout)")
        let counts = Self.counts(vote.stdout)
        #expect(counts["counted"] == 1 && counts["address_limit"] == 15, "\(vote.stdout) \(vote.stderr)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("500 chat lines and 30 cookie-less posts from 64 aliases of one machine: its rate; real lines stay")
    func chatFromAliasesIsLimitedPerMachine() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Chatty")
        let station = try Self.station(dj)
        let url = try #require(try dj.waitForEvent("web_page") { $0.name == "web_page" }.string("url"))
        let aliases = try Self.addAliases(lan, host: 2, count: 64)
        #expect(try lan.partyradio(host: 3, ["chat", "real line one"], role: "ann").exit == 0)

        // 30 posts to the page without a cookie (each a fresh guest), from the machine's aliases: one
        // machine's rate.
        let web = try lan.run(host: 2, ["python3", Self.aliasGuest, "web", url, "30"] + aliases, timeout: .seconds(60))
        let webCounts = Self.counts(web.stdout)
        print("30 web chat posts without a cookie from 64 aliases: \(web.stdout)")
        #expect((webCounts["delivered"] ?? 0) <= 5 && (webCounts["rate_limited"] ?? 0) >= 25, "\(web.stdout)")
        Thread.sleep(forTimeInterval: 10.2)  // the machine's rate window passes

        // 500 lines in 3 s, and a real guest's second line in the middle of them.
        let flood = try lan.spawn(
            host: 2, ["python3", Self.aliasGuest, "chat"] + station + ["500", "spam", "3"] + aliases)
        Thread.sleep(forTimeInterval: 1.5)
        let real = try lan.partyradio(host: 3, ["chat", "real line two"], role: "ann")
        #expect(real.exit == 0, "\(real.stderr)")
        #expect(flood.wait(timeout: .seconds(30)) == 0, "\(flood.text(.stderr))")
        let counts = Self.counts(flood.text(.stdout))
        print("500 chat lines from fresh keys on 64 aliases: \(flood.text(.stdout))")
        #expect((counts["delivered"] ?? 0) <= 5, "\(counts)")
        #expect((counts["rate_limited"] ?? 0) >= 490, "\(counts)")

        // The page's history still holds both real lines.
        let state = try lan.run(host: 3, ["curl", "-sS", url + "api/state"])
        let chat = ((parseJSON(state.stdout) as? [String: Any])?["chat"] as? [[String: Any]]) ?? []
        let texts = chat.compactMap { $0["text"] as? String }
        #expect(texts.contains("real line one") && texts.contains("real line two"), "\(texts)")
        #expect(texts.filter { $0.contains("spam") }.count <= 10, "\(texts)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Muting a guest mutes its machine: a fresh key or name from any of its addresses stays muted")
    func muteFollowsTheMachine() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Quiet")
        let station = try Self.station(dj)
        let aliases = try Self.addAliases(lan, host: 2, count: 8)
        func chat(_ count: Int, as name: String, from: ArraySlice<String>) throws -> [String: Int] {
            let result = try lan.run(
                host: 2, ["python3", Self.aliasGuest, "chat"] + station + [String(count), name, "0.3"] + Array(from))
            #expect(result.exit == 0, "\(result.stderr)")
            return Self.counts(result.stdout)
        }
        #expect(try chat(1, as: "spam", from: aliases[0..<1])["delivered"] == 1)
        let mark = dj.events.count
        dj.send("mute spam")
        try dj.waitForEvent(after: mark, "muted") {
            ($0.string("message") ?? $0.string("text") ?? "").contains("Muted")
        }
        // Fresh keys on other addresses of the machine, under the same name and under another.
        #expect(try chat(3, as: "spam", from: aliases[1..<4])["muted"] == 3)
        #expect(try chat(2, as: "friendly", from: aliases[4..<6])["muted"] == 2)
        // The CLI from the machine's own address, with a key of its own: muted too.
        let cli = try lan.partyradio(host: 2, ["chat", "it is me"], role: "fresh")
        #expect(cli.exit != 0, "\(cli.stdout) \(cli.stderr)")
        // Another machine is not.
        #expect(try lan.partyradio(host: 3, ["chat", "hello"], role: "ann").exit == 0)
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }
}
