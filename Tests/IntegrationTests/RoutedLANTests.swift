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
    func acrossARouter() throws { try Self.routedLAN { try acrossARouter($0) } }

    func acrossARouter(_ routed: RoutedLAN) throws {
        let (lan, dns) = (routed.lan, routed.dns)
        let dj = try routed.startDJ(name: "Over There", playing: true, extra: ["--trace", lan.tracePath("dj")])
        // The records, as BIND serves them to the other subnet.
        let ptr = try routed.dig("PTR", Self.services)
        #expect(ptr.contains("Over\\032There._partyradio._udp.party.example."), "PTR: \(ptr)")
        let srv = try routed.dig("SRV", "Over\\032There.\(Self.services)")
        #expect(srv.contains(".party.example."), "SRV: \(srv)")

        // mDNS does not cross the router; the domain does.
        let local = try lan.partyradio(host: 2, ["stations", "--json"], role: "observer")
        #expect((parseJSON(local.stdout) as? [[String: Any]])?.isEmpty == true, "mDNS alone: \(local.stdout)")
        let listing = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]], "\(listing)")
        #expect(stations.count == 1 && stations.first?["name"] as? String == "Over There", "\(listing.stdout)")

        // Without --dns-server the system's resolver is asked: a resolv.conf naming the router,
        // bind-mounted in a mount namespace of the command's own (the machine's file is untouched).
        let resolv = "/tmp/partyradio-it-\(lan.name)/resolv.conf"
        try "nameserver \(routed.server)\n".write(toFile: resolv, atomically: true, encoding: .utf8)
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
        let listener = try routed.listenInSync(to: "Over There", dj: dj)

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
        let twin = try routed.startDJ(host: 2, name: "Over There", role: "twin")
        try twin.waitForLine(containing: "as 'Over There #2'", stream: .stdout)
        let both = try routed.dig("PTR", Self.services)
        #expect(both.contains("Over\\032There\\032#2.") && both.contains("Over\\032There._"), "\(both)")
        twin.send("quit")
        #expect(twin.wait(timeout: .seconds(10)) == 0)
        let one = try routed.dig("PTR", Self.services)
        #expect(!one.contains("#2") && one.contains("Over\\032There._"), "the twin's quit: \(one)")

        // Going off air deletes the records; the listener hears the goodbye.
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(10)) == 0)
        try listener.waitForEvent(timeout: .seconds(5), "station gone") { $0.name == "station_gone" }
        #expect(try routed.dig("PTR", Self.services).isEmpty)
        let gone = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        #expect((parseJSON(gone.stdout) as? [[String: Any]])?.isEmpty == true, "after quit: \(gone.stdout)")
    }

    @Test(
        "Over IPv6 across a router: AAAA records (and A too on dual stack), found, heard and voted through the domain",
        arguments: [Testbed.IPFamily.v6, .dual])
    func overIPv6(family: Testbed.IPFamily) throws { try Self.routedLAN(family: family) { try overIPv6($0) } }

    func overIPv6(_ routed: RoutedLAN) throws {
        let (lan, dns) = (routed.lan, routed.dns)
        #expect(dns.last == "[\(routed.server)]:53" && routed.server.contains(":"), "DNS over IPv6: \(dns)")
        let dj = try routed.startDJ(name: "Sixes", playing: true, extra: ["--trace", lan.tracePath("dj")])

        // The DJ's host has an AAAA record with its unique local address (never its link-local
        // one), and an A record only where it has IPv4.
        let srv = try routed.dig("SRV", "Sixes.\(Self.services)")
        let target = try #require(srv.split(separator: " ").last.map(String.init))
        #expect(target.hasPrefix("dj-") && target.hasSuffix(".party.example."), "SRV: \(srv)")
        let aaaa = try routed.dig("AAAA", target)
        #expect(aaaa.split(separator: "\n") == [Substring(try lan.ipv6(host: 1))], "AAAA: \(aaaa)")
        let a = try routed.dig("A", target)
        let expectedA = lan.family == .dual ? [try lan.ip(host: 1)] : []
        #expect(a.split(separator: "\n").map(String.init) == expectedA, "A: \(a)")

        // Listed on the other subnet through the domain (mDNS does not cross the router).
        let listing = try lan.partyradio(host: 2, ["stations", "--json"] + dns, role: "observer")
        let stations = try #require(parseJSON(listing.stdout) as? [[String: Any]], "\(listing)")
        #expect(stations.map { $0["name"] as? String } == ["Sixes"], "\(listing.stdout)")

        // A listener there tunes in and plays in sync, a voter's vote counts.
        let listener = try routed.listenInSync(to: "Sixes", dj: dj)
        let vote = try lan.partyradio(host: 2, ["vote", "up", "--json"] + dns, role: "voter")
        #expect(vote.exit == 0, "vote: \(vote.stderr)")
        try dj.waitForEvent("vote counted") { $0.name == "vote_counted" }

        // Off air: both kinds of address record go with the rest.
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(10)) == 0)
        try listener.waitForEvent(timeout: .seconds(5), "station gone") { $0.name == "station_gone" }
        for type in ["AAAA", "A", "SRV"] {
            let left = try routed.dig(type, type == "SRV" ? "Sixes.\(Self.services)" : target)
            #expect(left.isEmpty, "\(type) after quit: \(left)")
        }
    }

    @Test(
        "A killed DJ's records lapse with their lease: guests drop it, another DJ takes the name, a DJ back too late moves"
    )
    func aKilledDJLapses() throws { try Self.routedLAN { try aKilledDJLapses($0) } }

    func aKilledDJLapses(_ routed: RoutedLAN) throws {
        let (lan, dns, dig) = (routed.lan, routed.dns, routed.dig)
        // A 12 s lease (renewed every 3 s, TTL 3 s) instead of 60 s, so that the test takes seconds.
        let lease = ["PARTYRADIO_DNS_LEASE": "12"]
        let instance = "Lapsing.\(Self.services)"
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

        let dj = try routed.startDJ(name: "Lapsing", env: lease)
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
        let again = try routed.startDJ(name: "Lapsing", env: lease)
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
        let other = try routed.startDJ(name: "Lapsing", role: "other", env: lease)
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
        #expect(try dig("PTR", Self.services).contains("Lapsing._"), "the records are still there")
        let gone = try listen()
        #expect(gone.contains("No station matches 'Lapsing'"), "past the lease: \(gone)")

        // A DJ with another key now takes the name itself, and the dead DJ's address goes. (On the
        // other subnet: on host 1 the frozen DJ's mDNS name would make Avahi rename it.)
        let heir = try routed.startDJ(host: 2, name: "Lapsing", role: "heir", env: lease)
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
        #expect(try dig("SRV", "Lapsing\\032#2.\(Self.services)").hasSuffix(host))
        #expect(try dig("A", host) == (try lan.ip(host: 1)), "its address is back")
        // Both listed (the station name stays 'Lapsing': only the instance in the zone changed).
        #expect(try browse().names == ["Lapsing", "Lapsing"])
        for dj in [again, heir] {
            dj.send("quit")
            #expect(dj.wait(timeout: .seconds(10)) == 0)
        }
        #expect(try dig("PTR", Self.services).isEmpty)
    }

    @Test("A DJ whose key the server does not take stops with the server's answer")
    func wrongKeyRefused() throws { try Self.routedLAN { try wrongKeyRefused($0) } }

    func wrongKeyRefused(_ routed: RoutedLAN) throws {
        let lan = routed.lan
        // A key of the same name with another secret: BIND answers NOTAUTH (a bad signature).
        let wrong = "/tmp/partyradio-it-\(lan.name)/wrong.key"
        let keygen = try lan.run(host: 1, ["tsig-keygen", "-a", "hmac-sha256", "partyradio"])
        try keygen.stdout.write(toFile: wrong, atomically: true, encoding: .utf8)
        let dj = try lan.run(
            host: 1,
            [Testbed.partyradioBinary, "dj", "--name", "Nope", "--no-audio", "--state-dir", lan.stateDir("dj")]
                + routed.dns + ["--dns-key", wrong], timeout: .seconds(20))
        #expect(dj.exit != 0)
        #expect(
            dj.stderr.contains("refused the update") || dj.stderr.contains("did not take the update"), "\(dj.stderr)")
        #expect(try routed.dig("PTR", Self.services).isEmpty, "nothing published")
    }

    /// The service's PTR name in the domain; an instance's name is `Label.` before it.
    static let services = "_partyradio._udp.\(domain)"

    /// The LAN the cases run on: host 1 on one subnet (the DJ's), host 2 on the other, and the
    /// router (host 3) between them, which forwards unicast only and serves the domain from BIND 9
    /// on its address on the DJ's subnet (IPv6 on a v6 or dual LAN, else IPv4). `body` runs with
    /// it up; BIND, the hosts and their state are gone after, however it ends.
    static func routedLAN(family: Testbed.IPFamily = .v4, _ body: (RoutedLAN) throws -> Void) throws {
        let lan = try Testbed(hosts: 2, ip: family, subnets: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let router = 3
        let bind = try startBIND(lan, host: router)
        defer { bind.kill() }
        try body(RoutedLAN(lan: lan, bind: bind, server: family == .v4 ? lan.ip(host: router) : lan.ipv6(host: router)))
    }

    /// A routed LAN up (``routedLAN(family:_:)``), and what its cases say to it.
    struct RoutedLAN {
        let lan: Testbed
        let bind: BIND
        /// The DNS server's address.
        let server: String

        /// What guests pass: the domain and the server.
        var dns: [String] {
            ["--domain", RoutedLANTests.domain, "--dns-server", server.contains(":") ? "[\(server)]:53" : server]
        }

        /// `dig +short` on host 2 (the other subnet) at the server, trimmed.
        func dig(_ type: String, _ name: String) throws -> String {
            let answer = try lan.run(host: 2, ["dig", "+short", "@\(server)", type, name])
            #expect(answer.exit == 0, "dig \(type) \(name): \(answer.stderr)")
            return answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A DJ on `host` publishing in the domain with the server's key; returned once its first
        /// update was taken.
        func startDJ(
            host: Int = 1, name: String, role: String = "dj", playing: Bool = false, extra: [String] = [],
            env: [String: String] = [:]
        ) throws -> TestbedProcess {
            let dj = try lan.startDJ(
                host: host, name: name, role: role, playing: playing,
                extra: dns + ["--dns-key", bind.keyFile] + extra, env: env)
            try dj.waitForLine(containing: "Published in the DNS domain \(RoutedLANTests.domain).", stream: .stdout)
            return dj
        }

        /// A listener on host 2 tuned in to `station` through the domain, joined at `dj`, and in
        /// sync (within 20 ms) 3 to 4 s after it tuned in.
        func listenInSync(to station: String, dj: TestbedProcess) throws -> TestbedProcess {
            let second = RoutedLANTests.second
            let listener = try lan.startListener(host: 2, role: "listener", station: station, extra: dns)
            let joined = try listener.waitForEvent(timeout: .seconds(15), "tuned in") { $0.name == "tuned_in" }.timeNs
            try dj.waitForEvent("listener joined") { $0.name == "listener_joined" && $0.int("listeners") == 1 }
            sleep(untilTrue: joined + 4 * second)
            let settled = lan.measureListener("listener").within(joined + 3 * second...joined + 4 * second)
            #expect(
                settled.playerCount > 0 && settled.worstPlayerMs < 20, "in sync across the router: \(settled.summary)")
            return listener
        }
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
