import Foundation
import Testing

/// The testbed itself: hosts discover each other through their own avahi-daemons, faults apply,
/// and nothing runs in the root network namespace.
@Suite(
    "Testbed", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct TestbedSelfTests {
    @Test("A service published on host 1 is resolved on host 2")
    func avahiServiceCrossesTheLAN() throws {
        try Testbed.withLAN(hosts: 2) { testbed in
            let ip1 = try testbed.ip(host: 1)
            let service = "it-\(testbed.name)"

            let publisher = try testbed.spawn(
                host: 1, ["avahi-publish", "-s", service, "_partyradio._udp", "5004", "v=1"])
            try publisher.waitForLine(containing: "Established", timeout: .seconds(10), stream: .stderr)

            let deadline = ContinuousClock.now + .seconds(5)
            var resolved: String?
            while resolved == nil, ContinuousClock.now < deadline {
                let browse = try testbed.run(host: 2, ["timeout", "5", "avahi-browse", "-rtp", "_partyradio._udp"])
                resolved = browse.stdout.split(separator: "\n").map(String.init)
                    .first { $0.hasPrefix("=;eth0;IPv4;\(service);_partyradio._udp;") }
            }
            let fields = try #require(resolved, "host 2 did not resolve \(service)").split(separator: ";")
            #expect(fields[6] == Substring("\(try testbed.hostName(host: 1)).local"))
            #expect(fields[7] == Substring(ip1))
            #expect(fields[8] == "5004")
            #expect(fields[9].contains("v=1"))

            #expect(try Testbed.auditRootNamespace() == [])

            // SIGTERM reaches the command (avahi-publish quits cleanly on it).
            publisher.kill()
            #expect(publisher.wait() == 0)
            #expect(publisher.readLines(.stderr).contains { $0.contains("Got SIGTERM") })
        }
    }

    @Test("An IPv6-only LAN: no IPv4 address, usable unique local addresses, avahi over IPv6; dual has both")
    func ipv6LANs() throws {
        try Testbed.withLAN(hosts: 2, ip: .v6) { testbed in
            let ip1 = try testbed.ipv6(host: 1)
            #expect(try testbed.ip(host: 1) == ip1)
            #expect(ip1.hasPrefix("fd99:") && ip1.hasSuffix("::1"))
            let addresses = try testbed.run(host: 1, ["ip", "-o", "addr", "show", "dev", "eth0"]).stdout
            #expect(!addresses.contains("inet "), "\(addresses)")
            // No duplicate address detection: nothing is left tentative, so the address works at once.
            #expect(addresses.contains("inet6 \(ip1)/64") && !addresses.contains("tentative"), "\(addresses)")
            #expect(addresses.contains("inet6 fe80::"), "\(addresses)")
            let service = "it6-\(testbed.name)"
            let publisher = try testbed.spawn(
                host: 1, ["avahi-publish", "-s", service, "_partyradio._udp", "5004", "v=1"])
            try publisher.waitForLine(containing: "Established", timeout: .seconds(10), stream: .stderr)
            let deadline = ContinuousClock.now + .seconds(5)
            var resolved: [String] = []
            while resolved.isEmpty, ContinuousClock.now < deadline {
                let browse = try testbed.run(host: 2, ["timeout", "5", "avahi-browse", "-rtp", "_partyradio._udp"])
                resolved = browse.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("=;eth0;") }
            }
            #expect(resolved.count == 1 && resolved.first?.hasPrefix("=;eth0;IPv6;\(service);") == true, "\(resolved)")
            #expect(resolved.first?.split(separator: ";")[7] == Substring(ip1))
            publisher.kill()
            _ = publisher.wait()
            // Loss applies to IPv6 too (ip6tables), and 0 takes it away again.
            try testbed.loss(host: 1, percent: 30)
            let rules = try testbed.run(host: 1, ["ip6tables", "-S", "PR_LOSS_IN"]).stdout
            #expect(rules.contains("-i eth0") && rules.contains("statistic"), "\(rules)")
            try testbed.loss(host: 1, percent: 0)
            #expect(!(try testbed.run(host: 1, ["ip6tables", "-S", "PR_LOSS_IN"]).stdout.contains("statistic")))
        }
        try Testbed.withLAN(hosts: 1, ip: .dual) { testbed in
            let v4 = try testbed.ip(host: 1)
            let v6 = try testbed.ipv6(host: 1)
            #expect(v4.hasPrefix("10.99.") && v6.hasPrefix("fd99:"))
            let addresses = try testbed.run(host: 1, ["ip", "-o", "addr", "show", "dev", "eth0"]).stdout
            #expect(addresses.contains("inet \(v4)/24") && addresses.contains("inet6 \(v6)/64"), "\(addresses)")
        }
        try Testbed.withLAN(hosts: 1) { testbed in
            // The default stays IPv4 only, with no IPv6 at all.
            #expect(throws: (any Error).self) { try testbed.ipv6(host: 1) }
            let addresses = try testbed.run(host: 1, ["ip", "-o", "addr", "show", "dev", "eth0"]).stdout
            #expect(!addresses.contains("inet6"), "\(addresses)")
        }
        #expect(try Testbed.auditRootNamespace() == [])
    }

    @Test("Commands run in the host's namespace, never the root one")
    func commandsRunInsideTheHost() throws {
        let testbed = try Testbed(hosts: 1)
        defer { testbed.shutdown() }
        let root =
            try String(contentsOfFile: "/proc/2/comm", encoding: .utf8) == "kthreadd\n"
            ? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/2/ns/net")
            : FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        let inside = try testbed.run(host: 1, ["readlink", "/proc/self/ns/net"])
        #expect(inside.exit == 0)
        #expect(inside.stdout.hasPrefix("net:["))
        #expect(inside.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != root)

        let failing = try testbed.run(host: 1, ["sh", "-c", "echo out; echo err >&2; exit 7"])
        #expect(failing.exit == 7)
        #expect(failing.stdout == "out\n")
        #expect(failing.stderr == "err\n")

        // Nothing reaches the command with signals blocked (Foundation would hand it Dispatch's mask).
        let status = try testbed.run(host: 1, ["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"]).stdout
        #expect(status.contains("SigBlk:\t0000000000000000"))

        let env = try testbed.run(host: 1, ["sh", "-c", "echo $PARTYRADIO_PROBE"], env: ["PARTYRADIO_PROBE": "yes"])
        #expect(env.stdout == "yes\n")

        let started = ContinuousClock.now
        #expect(throws: TestbedError.self) { try testbed.run(host: 1, ["sleep", "30"], timeout: .seconds(1)) }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test("An up that times out leaves nothing behind")
    func timedOutUpCleansUp() throws {
        #expect(throws: TestbedError.self) { try Testbed(hosts: 3, name: "tbtimeoutx", timeout: .milliseconds(300)) }
        let namespaces = try String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)
            .split(separator: "\n").filter { $0.contains("/run/netns/tbtimeoutx") }
        #expect(namespaces == [])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/partyradio-testbed/tbtimeoutx"))
    }

    @Test("Loss injection adds and removes the iptables rule on that host only")
    func lossInjection() throws {
        let testbed = try Testbed(hosts: 2)
        defer { testbed.shutdown() }

        try testbed.loss(host: 2, percent: 30)
        let rules = try testbed.run(host: 2, ["iptables", "-S", "PR_LOSS_IN"]).stdout
        let rule = try #require(
            rules.split(separator: "\n").first { $0.hasPrefix("-A PR_LOSS_IN -i eth0 -m statistic") })
        #expect(rule.hasSuffix("-j DROP"))
        // iptables prints the probability back as it stores it: 0.29999999981.
        let words = rule.split(separator: " ")
        let probability = try #require(words.firstIndex(of: "--probability").flatMap { Double(words[$0 + 1]) })
        #expect(abs(probability - 0.3) < 0.001)
        let other = try testbed.run(host: 1, ["iptables", "-S"]).stdout
        #expect(!other.contains("statistic"))

        try testbed.loss(host: 2, percent: 0)
        #expect(!(try testbed.run(host: 2, ["iptables", "-S", "PR_LOSS_IN"]).stdout.contains("DROP")))
    }

    @Test("Pulling the cable drops carrier; stopping avahi takes the daemon away")
    func linkAndAvahiFaults() throws {
        let testbed = try Testbed(hosts: 2)
        defer { testbed.shutdown() }

        try testbed.linkDown(host: 2)
        #expect(try testbed.run(host: 2, ["ip", "-o", "link", "show", "eth0"]).stdout.contains("NO-CARRIER"))
        try testbed.linkUp(host: 2)
        #expect(!(try testbed.run(host: 2, ["ip", "-o", "link", "show", "eth0"]).stdout.contains("NO-CARRIER")))

        try testbed.stopAvahi(host: 1)
        #expect(try testbed.run(host: 1, ["avahi-daemon", "--check"]).exit != 0)
        try testbed.startAvahi(host: 1)
        #expect(try testbed.run(host: 1, ["avahi-daemon", "--check"]).exit == 0)
    }
}
