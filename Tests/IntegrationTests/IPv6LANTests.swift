import Foundation
import Testing

/// partyradio on LANs with IPv6: one with no IPv4 address at all (a unique local prefix and
/// link-local addresses only), and a dual-stack one (docs/NETWORKS.md).
@Suite(
    "IPv6 on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct IPv6LANTests {
    static let second: Int64 = 1_000_000_000

    @Test("IPv6 only: found, joined and in sync, media over IPv6, a vote counted and heard on the group")
    func ipv6Only() throws {
        let lan = try Testbed(hosts: 3, ip: .v6)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let djAddress = try lan.ipv6(host: 1)
        // No IPv4 on the LAN: the hosts have no address the old code could have used.
        let v4 = try lan.run(host: 1, ["ip", "-4", "-o", "addr", "show", "dev", "eth0"])
        #expect(v4.exit == 0 && v4.stdout.isEmpty, "host 1 has an IPv4 address: \(v4.stdout)")

        let dj = try lan.startDJ(host: 1, name: "Sixes", extra: ["--trace", lan.tracePath("dj")])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        #expect(started.string("address") == djAddress)

        // Another host lists it at its IPv6 address, with its web page in a bracketed URL.
        let listing = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect(listing.exit == 0, "\(listing.stderr)")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]])
        #expect(stations.count == 1)
        #expect(stations.first?["name"] as? String == "Sixes")
        #expect(stations.first?["address"] as? String == djAddress)
        let web = try #require(stations.first?["web"] as? String)
        #expect(web.hasPrefix("http://[\(djAddress)]:"), "\(web)")
        // The web page answers at that URL from another host (curl takes the bracketed literal as is).
        let page = try lan.run(
            host: 2, ["curl", "-g", "-sS", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}", web])
        #expect(page.stdout == "200", "\(page.stdout) \(page.stderr)")

        // A listener with a player tunes in, plays the DJ's music (served over IPv6: there is
        // nothing else) and keeps in time with the station.
        let listener = try lan.startListener(host: 3, role: "listener", station: "Sixes", extra: ["-v"])
        let tuned = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }
        let station = try #require(tuned["station"] as? [String: Any])
        #expect(station["address"] as? String == djAddress)
        let source = try #require((station["now_playing"] as? [String: Any])?["source"] as? String)
        #expect(source.hasPrefix("http://[\(djAddress)]:"), "\(source)")
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" && $0.int("listeners") == 1 }

        // A vote from the third host is counted, and the tally reaches the listener on the group.
        let mark = listener.events.count
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--json"], role: "voter")
        #expect(vote.exit == 0, "\(vote.stderr)")
        let counted = try #require(parseJSON(vote.stdout) as? [String: Any])
        #expect(counted["up"] as? Int == 1 && counted["listeners"] as? Int == 1, "\(counted)")
        try listener.waitForEvent(after: mark, timeout: .seconds(3), "tally on the group") {
            $0.string("change") == "votes" && $0.int("up") == 1
        }

        sleep(untilTrue: tuned.timeNs + 6 * Self.second)
        let held = lan.measureListener("listener").within(
            tuned.timeNs + 3 * Self.second...tuned.timeNs + 6 * Self.second)
        print("sync on an IPv6-only LAN, 3–6 s after joining: \(held.summary)")
        #expect(held.count >= 30, "\(held.count) trace lines in 3 s")
        #expect(held.worstLogicalMs < 1, "\(held.summary)")
        #expect(held.playerCount >= held.count * 9 / 10, "the listener plays: \(held.summary)")
        #expect(held.worstPlayerMs < 20, "\(held.summary)")
        // The media cache fetched the track from the DJ's IPv6 address.
        #expect(
            listener.text(.stderr).contains("media cache:") && listener.text(.stderr).contains("http://[\(djAddress)]:")
        )

        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
        let drops = try #require(listener.events.last { $0.name == "listener_stopped" }?["dropped"] as? [String: Int])
        #expect(drops.isEmpty, "\(drops)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test("Link-local addresses only: a station is found, joined and played with its zone (%eth0, %25eth0 in URLs)")
    func linkLocalOnly() throws {
        let lan = try Testbed(hosts: 2, ip: .v6)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Take the unique local addresses away: only fe80::/10 is left, which needs a zone.
        for host in 1...2 {
            let removed = try lan.run(
                host: host, ["ip", "-6", "addr", "del", "\(try lan.ipv6(host: host))/64", "dev", "eth0"])
            #expect(removed.exit == 0, "\(removed.stderr)")
        }
        let dj = try lan.startDJ(host: 1, name: "Local", extra: ["--trace", lan.tracePath("dj")])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let address = try #require(started.string("address"))
        #expect(address.hasPrefix("fe80::") && address.hasSuffix("%eth0"), "\(address)")

        let listing = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]])
        #expect(stations.count == 1 && stations.first?["address"] as? String == address, "\(listing.stdout)")
        let bare = String(address.dropLast("%eth0".count))
        #expect(
            (stations.first?["web"] as? String)?.hasPrefix("http://[\(bare)%25eth0]:") == true, "\(listing.stdout)")

        let listener = try lan.startListener(host: 2, role: "listener", station: "Local", extra: ["-v"])
        let tuned = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }
        sleep(untilTrue: tuned.timeNs + 5 * Self.second)
        let held = lan.measureListener("listener").within(
            tuned.timeNs + 3 * Self.second...tuned.timeNs + 5 * Self.second)
        print("sync on a link-local-only LAN, 3–5 s after joining: \(held.summary)")
        #expect(held.playerCount >= held.count * 9 / 10 && held.count >= 20, "the listener plays: \(held.summary)")
        #expect(held.worstLogicalMs < 1, "\(held.summary)")
        #expect(
            listener.text(.stderr).contains("media cache:")
                && listener.text(.stderr).contains("http://[\(bare)%25eth0]:"))
        listener.kill(signal: SIGINT)
        #expect(listener.wait(timeout: .seconds(5)) == 0)
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test(
        "Dual stack: one station listed once, at its IPv4 address; each group datagram heard once; an IPv6-only host joins too"
    )
    func dualStack() throws {
        let lan = try Testbed(hosts: 3, ip: .dual)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Host 3 loses its IPv4 address: an IPv6-only machine on a dual-stack LAN.
        let x = try lan.ip(host: 3)
        let removed = try lan.run(host: 3, ["ip", "-4", "addr", "del", "\(x)/24", "dev", "eth0"])
        #expect(removed.exit == 0, "\(removed.stderr)")
        let dj = try lan.startDJ(host: 1, name: "Both")
        let listing = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect(listing.exit == 0, "\(listing.stderr)")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]])
        #expect(stations.count == 1, "\(listing.stdout)")
        #expect(stations.first?["address"] as? String == (try lan.ip(host: 1)))

        // The DJ sends to both groups. The dual-stack listener joins both and drops the twins
        // before its replay check, so nothing is counted as dropped; the IPv6-only one finds the
        // station at its IPv6 address and hears the IPv6 group.
        let listeners = try [2, 3].map { host in
            try lan.spawn(
                host: host,
                [
                    Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                    lan.stateDir("listener\(host)"),
                ])
        }
        let tuned = try listeners.map {
            try $0.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }
        }
        #expect((tuned[0]["station"] as? [String: Any])?["address"] as? String == (try lan.ip(host: 1)))
        #expect((tuned[1]["station"] as? [String: Any])?["address"] as? String == (try lan.ipv6(host: 1)))
        try dj.waitForEvent("both listeners") { $0.name == "listener_joined" && $0.int("listeners") == 2 }
        let marks = listeners.map { $0.events.count }
        dj.send("next")
        for (listener, mark) in zip(listeners, marks) {
            try listener.waitForEvent(after: mark, timeout: .seconds(2), "track change") {
                $0.name == "state" && $0.string("change") == "track" && $0.int("queue_index") == 1
            }
        }
        sleep(untilTrue: tuned.map(\.timeNs).max()! + 3 * Self.second)
        for listener in listeners {
            listener.kill(signal: SIGINT)
            #expect(listener.wait(timeout: .seconds(5)) == 0)
            let drops = try #require(
                listener.events.last { $0.name == "listener_stopped" }?["dropped"] as? [String: Int])
            #expect(drops.isEmpty, "host \(listener.host): \(drops)")
        }
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }

    @Test(
        "Dual stack with link-local IPv6 only: every listing gives the IPv4 address and a web URL a browser opens"
    )
    func dualStackWithLinkLocalIPv6() throws {
        let lan = try Testbed(hosts: 3, ip: .dual)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Every Linux LAN by default: IPv4, and IPv6 link-local addresses (fe80::/10) beside it.
        for host in 1...3 {
            let removed = try lan.run(
                host: host, ["ip", "-6", "addr", "del", "\(try lan.ipv6(host: host))/64", "dev", "eth0"])
            #expect(removed.exit == 0, "\(removed.stderr)")
        }
        let dj = try lan.startDJ(host: 1, name: "Both")
        let v4 = try lan.ip(host: 1)
        let watcher = try lan.spawn(
            host: 3, [Testbed.partyradioBinary, "stations", "--watch", "--json", "--state-dir", lan.stateDir("w")])
        defer { watcher.kill(signal: SIGINT) }
        // One run after another gives the same answer: IPv4, and a page at http://IPv4:PORT/.
        var seen: [String] = []
        for run in 1...12 {
            let listing = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer\(run)")
            let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]], "\(listing.stderr)")
            #expect(stations.count == 1, "\(listing.stdout)")
            let address = stations.first?["address"] as? String ?? "none"
            let web = stations.first?["web"] as? String ?? "none"
            seen.append(address)
            #expect(address == v4 && web.hasPrefix("http://\(v4):"), "run \(run): \(address) \(web)")
        }
        print("dual stack, link-local IPv6: 12 listings at \(Set(seen).sorted())")
        let listener = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        defer { listener.kill(signal: SIGINT) }
        let tuned = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }
        #expect((tuned["station"] as? [String: Any])?["address"] as? String == v4)
        // The watcher, running all along, never gave another address.
        let addresses = Set(
            watcher.events.flatMap { ($0["stations"] as? [[String: Any]]) ?? [] }.compactMap {
                $0["address"] as? String
            })
        #expect(addresses == [v4], "\(addresses)")
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
    }
}
