import Foundation
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
        try keygen.stdout.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let zone = """
            $TTL 60
            @ IN SOA ns.\(domain). admin.\(domain). ( 1 60 60 600 60 )
            @ IN NS ns.\(domain).
            ns IN A \(try lan.ip(host: host))

            """
        try zone.write(toFile: "\(dir)/\(domain).zone", atomically: true, encoding: .utf8)
        let conf = """
            include "\(keyFile)";
            options {
                directory "\(dir)";
                listen-on { any; };
                listen-on-v6 { none; };
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
