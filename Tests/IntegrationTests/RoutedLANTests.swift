import Foundation
import PartyRadioCore
import Testing

/// Beyond one link: a DJ on one subnet, a listener and a voter on another, a router between them
/// that forwards unicast only (no multicast routing), and BIND 9 on the router serving the unicast
/// DNS-SD domain `party.example`, updated by the DJ with a TSIG key (docs/NETWORKS.md).
@Suite(
    "Routed LAN: unicast DNS-SD", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct RoutedLANTests {
    static let second: Int64 = 1_000_000_000
    static let domain = "party.example"

    @Test("Published in DNS, found and heard across a router, votes counted, records gone on quit")
    func acrossARouter() throws {
        // Host 1 on subnet a, host 2 on subnet b, host 3 the router with BIND.
        let lan = try Testbed(hosts: 2, subnets: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let router = 3
        let serverA = try lan.ip(host: router)  // the router's address on the DJ's subnet
        let bind = try Self.startBIND(lan, host: router)
        defer { bind.kill() }
        let dns = ["--domain", Self.domain, "--dns-server", serverA]

        let dj = try lan.startDJ(
            host: 1, name: "Over There", playing: true,
            extra: dns + ["--dns-key", bind.keyFile, "--trace", lan.tracePath("dj")])
        try dj.waitForLine(containing: "Published in the DNS domain party.example.", stream: .stdout)
        // The records, as BIND serves them to the other subnet.
        let ptr = try lan.run(host: 2, ["dig", "+short", "@\(serverA)", "PTR", "_partyradio._udp.\(Self.domain)"])
        #expect(ptr.stdout.contains("Over\\032There._partyradio._udp.party.example."), "PTR: \(ptr.stdout)")
        let srv = try lan.run(
            host: 2, ["dig", "+short", "@\(serverA)", "SRV", "Over\\032There._partyradio._udp.\(Self.domain)"])
        #expect(srv.stdout.contains(".party.example."), "SRV: \(srv.stdout)")

        // mDNS does not cross the router; the domain does.
        let local = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect((parseJSON(local.stdout) as? [[String: Any]])?.isEmpty == true, "mDNS alone: \(local.stdout)")
        let listing = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]], "\(listing)")
        #expect(stations.count == 1 && stations.first?["name"] as? String == "Over There", "\(listing.stdout)")

        // Without --dns-server the system's resolver is asked: a resolv.conf naming the router,
        // bind-mounted in a mount namespace of the command's own (the machine's file is untouched).
        let resolv = "/tmp/partyradio-it-\(lan.name)/resolv.conf"
        try "nameserver \(serverA)\n".write(toFile: resolv, atomically: true, encoding: .utf8)
        let bySystem = try lan.run(
            host: 2,
            [
                "unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"", resolv, Testbed.partyradioBinary,
                "stations", "--json", "--domain", Self.domain, "--state-dir", lan.stateDir("observer"),
            ])
        #expect(
            (parseJSON(bySystem.stdout) as? [[String: Any]])?.first?["name"] as? String == "Over There",
            "through /etc/resolv.conf: \(bySystem)")

        // A listener on the other subnet tunes in and plays in sync: the DJ sends it by unicast what
        // it multicasts on its own subnet.
        let listener = try lan.startListener(host: 2, role: "listener", station: "Over There", extra: dns)
        let joined = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }.timeNs
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" && $0.int("listeners") == 1 }
        sleep(untilTrue: joined + 4 * Self.second)
        let settled = lan.measureListener("listener").within(joined + 3 * Self.second...joined + 4 * Self.second)
        #expect(settled.playerCount > 0 && settled.worstPlayerMs < 20, "in sync across the router: \(settled.summary)")

        // A skip reaches it by unicast.
        let mark = listener.events.count
        dj.send("next")
        try listener.waitForEvent(after: mark, timeout: .seconds(2), "track change") {
            $0.name == "state" && $0.string("change") == "track" && $0.int("queue_index") == 1
        }

        // A voter on the listener's subnet finds the DJ through the domain; the vote counts once.
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--json"] + dns, role: "voter")
        #expect(vote.exit == 0, "vote: \(vote.stderr)")
        try dj.waitForEvent("vote counted") { $0.name == "vote_counted" }
        #expect(
            !listener.events.contains { $0.name == "station_silent" },
            "the listener heard the station all along (unicast snapshots)")

        // A second DJ of the same name, on the other subnet, leaves the name to the first one.
        let twin = try lan.startDJ(
            host: 2, name: "Over There", role: "twin", extra: dns + ["--dns-key", bind.keyFile])
        try twin.waitForLine(containing: "as 'Over There #2'", stream: .stdout)
        let both = try lan.run(host: 2, ["dig", "+short", "@\(serverA)", "PTR", "_partyradio._udp.\(Self.domain)"])
        #expect(
            both.stdout.contains("Over\\032There\\032#2.") && both.stdout.contains("Over\\032There._"), "\(both.stdout)"
        )
        twin.send("quit")
        #expect(twin.wait(timeout: .seconds(10)) == 0)
        let one = try lan.run(host: 2, ["dig", "+short", "@\(serverA)", "PTR", "_partyradio._udp.\(Self.domain)"])
        #expect(!one.stdout.contains("#2") && one.stdout.contains("Over\\032There._"), "the twin's quit: \(one.stdout)")

        // Going off air deletes the records; the listener hears the goodbye.
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(10)) == 0)
        try listener.waitForEvent(timeout: .seconds(5), "station gone") { $0.name == "station_gone" }
        let after = try lan.run(host: 2, ["dig", "+short", "@\(serverA)", "PTR", "_partyradio._udp.\(Self.domain)"])
        #expect(after.exit == 0 && after.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(after)")
        let gone = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        #expect((parseJSON(gone.stdout) as? [[String: Any]])?.isEmpty == true, "after quit: \(gone.stdout)")
    }

    @Test(
        "Over IPv6 across a router: AAAA records (and A too on dual stack), found, heard and voted through the domain",
        arguments: [Testbed.IPFamily.v6, .dual])
    func overIPv6(family: Testbed.IPFamily) throws {
        let lan = try Testbed(hosts: 2, ip: family, subnets: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let router = 3
        let server = try lan.ipv6(host: router)  // the router's address on the DJ's subnet
        let bind = try Self.startBIND(lan, host: router)
        defer { bind.kill() }
        let dns = ["--domain", Self.domain, "--dns-server", "[\(server)]:53"]
        let dj = try lan.startDJ(
            host: 1, name: "Sixes", playing: true,
            extra: dns + ["--dns-key", bind.keyFile, "--trace", lan.tracePath("dj")])
        try dj.waitForLine(containing: "Published in the DNS domain party.example.", stream: .stdout)

        // The DJ's host has an AAAA record with its unique local address (never its link-local
        // one), and an A record only where it has IPv4.
        let srv = try lan.run(
            host: 2, ["dig", "+short", "@\(server)", "SRV", "Sixes._partyradio._udp.\(Self.domain)"])
        let target = try #require(
            srv.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(target.hasPrefix("dj-") && target.hasSuffix(".party.example."), "SRV: \(srv.stdout)")
        let aaaa = try lan.run(host: 2, ["dig", "+short", "@\(server)", "AAAA", target])
        #expect(aaaa.stdout.split(separator: "\n") == [Substring(try lan.ipv6(host: 1))], "AAAA: \(aaaa.stdout)")
        let a = try lan.run(host: 2, ["dig", "+short", "@\(server)", "A", target])
        let expectedA = family == .dual ? [try lan.ip(host: 1)] : []
        #expect(a.stdout.split(separator: "\n").map(String.init) == expectedA, "A: \(a.stdout)")

        // Listed on the other subnet through the domain (mDNS does not cross the router).
        let listing = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]], "\(listing)")
        #expect(stations.map { $0["name"] as? String } == ["Sixes"], "\(listing.stdout)")

        // A listener there tunes in and plays in sync, a voter's vote counts.
        let listener = try lan.startListener(host: 2, role: "listener", station: "Sixes", extra: dns)
        let joined = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }.timeNs
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" && $0.int("listeners") == 1 }
        sleep(untilTrue: joined + 4 * Self.second)
        let settled = lan.measureListener("listener").within(joined + 3 * Self.second...joined + 4 * Self.second)
        #expect(settled.playerCount > 0 && settled.worstPlayerMs < 20, "in sync across the router: \(settled.summary)")
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--json"] + dns, role: "voter")
        #expect(vote.exit == 0, "vote: \(vote.stderr)")
        try dj.waitForEvent("vote counted") { $0.name == "vote_counted" }

        // Off air: both kinds of address record go with the rest.
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(10)) == 0)
        try listener.waitForEvent(timeout: .seconds(5), "station gone") { $0.name == "station_gone" }
        for type in ["AAAA", "A", "SRV"] {
            let left = try lan.run(
                host: 2,
                ["dig", "+short", "@\(server)", type, type == "SRV" ? "Sixes._partyradio._udp.\(Self.domain)" : target])
            #expect(left.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(type) after quit: \(left)")
        }
    }

    @Test(
        "A killed DJ's records lapse with their lease: guests drop it, another DJ takes the name, a DJ back too late moves"
    )
    func aKilledDJLapses() throws {
        let lan = try Testbed(hosts: 2, subnets: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let router = 3
        let server = try lan.ip(host: router)
        let bind = try Self.startBIND(lan, host: router)
        defer { bind.kill() }
        let dns = ["--domain", Self.domain, "--dns-server", server]
        let publish = dns + ["--dns-key", bind.keyFile]
        // A 12 s lease (renewed every 3 s, TTL 3 s) instead of 60 s, so that the test takes seconds.
        let lease = ["PARTYRADIO_DNS_LEASE": "12"]
        let instance = "Lapsing._partyradio._udp.\(Self.domain)"
        func dig(_ type: String, _ name: String) throws -> String {
            try lan.run(host: 2, ["dig", "+short", "@\(server)", type, name]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func leaseValue() throws -> Int64? {
            let txt = try dig("TXT", instance)
            guard let range = txt.range(of: "\"lease=") else { return nil }
            return Int64(txt[range.upperBound...].prefix { $0.isNumber })
        }
        func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }
        /// `stations` on the other subnet: what it lists, and whether it left a station out for its
        /// lease (counted, and said on stderr beside the listing).
        func browse() throws -> (names: [String], leftOut: Bool) {
            let run = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
            let names = (parseJSON(run.stdout) as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            return (names, run.stderr.contains("(1 dns_lease_passed)"))
        }

        let dj = try lan.startDJ(host: 1, name: "Lapsing", extra: publish, env: lease)
        try dj.waitForLine(containing: "Published in the DNS domain party.example.", stream: .stdout)
        let host = try dig("SRV", instance).split(separator: " ").last.map(String.init) ?? ""
        #expect(host.hasPrefix("dj-"), "SRV target: \(host)")
        let txt = try dig("TXT", instance)
        let first = try #require(try leaseValue(), "TXT: \(txt)")
        #expect(abs(first - (unixNow() + 12)) <= 3, "a 12 s lease from now: \(first), now \(unixNow())")
        #expect(try browse().names == ["Lapsing"])
        // Renewed while the DJ lives.
        let renewed = Date().addingTimeInterval(8)
        while Date() < renewed, try leaseValue() == first { usleep(250_000) }
        #expect(try leaseValue().map { $0 > first } == true, "renewed within 8 s")

        // SIGKILL: nothing deletes the records.
        dj.kill(signal: SIGKILL)
        _ = dj.wait(timeout: .seconds(5))
        let killedAt = unixNow()
        let stale = try #require(try leaseValue(), "the records stay after SIGKILL")
        #expect(try dig("A", host) == (try lan.ip(host: 1)))
        // The same DJ started again (its key, its state) replaces its own records at once, under
        // its own name.
        let again = try lan.startDJ(host: 1, name: "Lapsing", extra: publish, env: lease)
        let published = try again.waitForLine(containing: "Published in the DNS domain", stream: .stdout)
        #expect(!published.contains("#2"), "\(published)")
        #expect(try leaseValue().map { $0 >= stale } == true)
        // Now frozen (SIGSTOP: a DJ whose network went down): it neither answers nor renews.
        again.kill(signal: SIGSTOP)
        let lastLease = try #require(try leaseValue())
        // A guest asking for it by name while the lease runs hears that it is announced but silent.
        func listen() throws -> String {
            try lan.partyradio(
                host: 2, ["listen", "Lapsing", "--no-audio", "--timeout", "2"] + dns, role: "late"
            ).stderr
        }
        let silent = try listen()
        #expect(silent.contains("'Lapsing' is announced") && silent.contains("does not answer"), "\(silent)")

        // Another DJ of that name (another key) leaves it alone while the lease runs...
        let other = try lan.startDJ(host: 1, name: "Lapsing", role: "other", extra: publish, env: lease)
        try other.waitForLine(containing: "as 'Lapsing #2'", stream: .stdout)
        other.send("quit")
        #expect(other.wait(timeout: .seconds(10)) == 0)
        // ... and so do guests, who also do not list it (the DJ does not answer their queries).
        if unixNow() < lastLease {
            let early = try browse()
            #expect(early.names.isEmpty && !early.leftOut, "within the lease: \(early)")
        }

        // Past the lease (and the 5 s grace for clocks), guests leave the station out.
        let deadline = Date().addingTimeInterval(Double(lastLease + DNSLease.graceSeconds - unixNow()) + 6)
        var lapsed = false
        while !lapsed && Date() < deadline {
            lapsed = try browse().leftOut
            if !lapsed { usleep(500_000) }
        }
        #expect(lapsed, "left out by guests once the lease passed (killed at \(killedAt), lease until \(lastLease))")
        #expect(unixNow() > lastLease + DNSLease.graceSeconds - 1, "not before the lease and its grace passed")
        #expect(try dig("PTR", "_partyradio._udp.\(Self.domain)").contains("Lapsing._"), "the records are still there")
        let gone = try listen()
        #expect(gone.contains("No station matches 'Lapsing'"), "past the lease: \(gone)")

        // A DJ with another key now takes the name itself, and the dead DJ's address goes. (On the
        // other subnet: on host 1 the frozen DJ's mDNS name would make Avahi rename it.)
        let heir = try lan.startDJ(host: 2, name: "Lapsing", role: "heir", extra: publish, env: lease)
        let took = try heir.waitForLine(containing: "Took over 'Lapsing'", stream: .stdout)
        #expect(took.contains(host), "\(took)")
        #expect(try dig("A", host).isEmpty, "the dead DJ's A record is deleted")
        #expect(try dig("SRV", instance).hasSuffix(host) == false)
        #expect(try browse().names == ["Lapsing"])

        // The frozen DJ comes back (its network returns): at its next renewal it finds the name
        // held by a live DJ and moves to 'Lapsing #2', rather than overwrite the heir's records.
        let heirs = try dig("SRV", instance)
        again.kill(signal: SIGCONT)
        try again.waitForLine(containing: "published as 'Lapsing #2' there now", timeout: .seconds(10), stream: .stdout)
        #expect(try dig("SRV", instance) == heirs, "the heir keeps its name")
        #expect(try dig("SRV", "Lapsing\\032#2._partyradio._udp.\(Self.domain)").hasSuffix(host))
        #expect(try dig("A", host) == (try lan.ip(host: 1)), "its address is back")
        // Both listed (the station name stays 'Lapsing': only the instance in the zone changed).
        #expect(try browse().names == ["Lapsing", "Lapsing"])
        for dj in [again, heir] {
            dj.send("quit")
            #expect(dj.wait(timeout: .seconds(10)) == 0)
        }
        #expect(try dig("PTR", "_partyradio._udp.\(Self.domain)").isEmpty)
    }

    @Test("A DJ whose key the server does not take stops with the server's answer")
    func wrongKeyRefused() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let bind = try Self.startBIND(lan, host: 2)
        defer { bind.kill() }
        // A key of the same name with another secret: BIND answers NOTAUTH (a bad signature).
        let wrong = "/tmp/partyradio-it-\(lan.name)/wrong.key"
        let keygen = try lan.run(host: 2, ["tsig-keygen", "-a", "hmac-sha256", "partyradio"])
        try keygen.stdout.write(toFile: wrong, atomically: true, encoding: .utf8)
        let dj = try lan.run(
            host: 1,
            [
                Testbed.partyradioBinary, "dj", "--name", "Nope", "--no-audio", "--state-dir", lan.stateDir("dj"),
                "--domain", Self.domain, "--dns-server", try lan.ip(host: 2), "--dns-key", wrong,
            ], timeout: .seconds(20))
        #expect(dj.exit != 0)
        #expect(
            dj.stderr.contains("refused the update") || dj.stderr.contains("did not take the update"), "\(dj.stderr)")
    }

    /// BIND 9 on `host`, authoritative for party.example, taking updates signed with a fresh key.
    struct BIND {
        let process: TestbedProcess
        let keyFile: String
        func kill() {
            process.kill()
            _ = process.wait(timeout: .seconds(5))
        }
    }

    static func startBIND(_ lan: Testbed, host: Int) throws -> BIND {
        let dir = "/tmp/partyradio-it-\(lan.name)/bind"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let keygen = try lan.run(host: host, ["tsig-keygen", "-a", "hmac-sha256", "partyradio"])
        #expect(keygen.exit == 0, "tsig-keygen: \(keygen.stderr)")
        let keyFile = "\(dir)/partyradio.key"
        let address = try lan.ip(host: host)
        try keygen.stdout.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let zone = """
            $TTL 60
            @ IN SOA ns.\(domain). admin.\(domain). ( 1 60 60 600 60 )
            @ IN NS ns.\(domain).
            ns IN \(address.contains(":") ? "AAAA" : "A") \(address)

            """
        try zone.write(toFile: "\(dir)/\(domain).zone", atomically: true, encoding: .utf8)
        let conf = """
            include "\(keyFile)";
            options {
                directory "\(dir)";
                listen-on { any; };
                listen-on-v6 { \(lan.family == .v4 ? "none" : "any"); };
                recursion no;
                dnssec-validation no;
                pid-file "\(dir)/named.pid";
                session-keyfile "\(dir)/session.key";
            };
            zone "\(domain)" {
                type primary;
                file "\(dir)/\(domain).zone";
                allow-update { key "partyradio"; };
            };

            """
        try conf.write(toFile: "\(dir)/named.conf", atomically: true, encoding: .utf8)
        let named = try lan.spawn(host: host, ["named", "-g", "-u", "root", "-c", "\(dir)/named.conf"])
        try named.waitForLine(containing: "running", timeout: .seconds(15), stream: .stderr)
        return BIND(process: named, keyFile: keyFile)
    }
}
