import Foundation
import Testing

/// `partyradio doctor` on a namespace host: its multicast self-test sends only there.
@Suite(
    "Doctor on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct DoctorLANTests {
    @Test("Passes what works, fails avahi, multicast and the catalog when they are broken, each with its fix")
    func checks() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The catalog: nothing listens on port 9 of the host's loopback.
        let doctor = [
            "doctor", "--json", "--timeout", "1", "--itunes-url", "http://127.0.0.1:9", "--audio-driver", "null",
        ]
        func run() throws -> (exit: Int32, checks: [String: [String: Any]]) {
            let result = try lan.partyradio(host: 1, doctor, role: "doctor")
            let object = try #require(parseJSON(result.stdout) as? [String: Any], "\(result.stdout) \(result.stderr)")
            let checks = try #require(object["checks"] as? [[String: Any]])
            return (result.exit, Dictionary(uniqueKeysWithValues: checks.map { ($0["name"] as? String ?? "", $0) }))
        }
        let first = try run()
        #expect(first.exit == 1)
        #expect(
            first.checks.keys.sorted() == ["audio", "avahi", "catalog", "clock", "firewall", "interface", "multicast"])
        for name in ["interface", "avahi", "multicast", "firewall", "audio"] {
            #expect(first.checks[name]?["ok"] as? Bool == true, "\(name): \(first.checks[name] ?? [:])")
            #expect(first.checks[name]?["skipped"] as? Bool == false)
        }
        // No station on the air: the clock check is skipped, which is no failure.
        #expect(first.checks["clock"]?["ok"] as? Bool == true && first.checks["clock"]?["skipped"] as? Bool == true)
        #expect(first.checks["catalog"]?["ok"] as? Bool == false)
        #expect((first.checks["catalog"]?["fix"] as? String)?.isEmpty == false)

        // A firewall that drops what comes in on eth0: the self-test does not come back.
        try lan.loss(host: 1, percent: 100, direction: .inbound)
        let walled = try run()
        #expect(walled.checks["multicast"]?["ok"] as? Bool == false, "\(walled.checks["multicast"] ?? [:])")
        #expect((walled.checks["multicast"]?["fix"] as? String)?.contains("iptables") == true)
        #expect(walled.checks["firewall"]?["ok"] as? Bool == false, "\(walled.checks["firewall"] ?? [:])")
        #expect((walled.checks["firewall"]?["detail"] as? String)?.contains("PR_LOSS_IN -i eth0 -j DROP") == true)
        try lan.loss(host: 1, percent: 0)

        try lan.stopAvahi(host: 1)
        let noAvahi = try run()
        #expect(noAvahi.exit == 1)
        #expect(noAvahi.checks["avahi"]?["ok"] as? Bool == false)
        #expect((noAvahi.checks["avahi"]?["fix"] as? String)?.contains("avahi-daemon") == true)
        #expect(noAvahi.checks["multicast"]?["ok"] as? Bool == true)

        let text = try lan.partyradio(host: 1, ["doctor", "--interface", "nosuch0", "--timeout", "1"], role: "doctor")
        #expect(text.exit == 1)
        #expect(text.stdout.contains("FAIL interface: ") && text.stdout.contains("fix: "))
        #expect(try Testbed.auditRootNamespace().isEmpty)
    }

    @Test("Measures the clock against a station on the air, plays a tone, and fails when UDP is dropped on either side")
    func station() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The DJ's clock runs 1.5 s ahead of the doctor's: the doctor must see it.
        let dj = try lan.startDJ(host: 1, name: "Rooftop", extra: ["--clock-offset-ms", "1500"])
        defer { dj.kill() }
        let doctor = [
            Testbed.partyradioBinary, "doctor", "--json", "--timeout", "1", "--itunes-url", "http://127.0.0.1:9",
            "--state-dir", lan.stateDir("doctor"),
        ]
        func run(_ extra: [String] = ["--audio-driver", "null"], env: [String: String] = [:]) throws -> [String:
            [String: Any]]
        {
            let result = try lan.run(host: 2, doctor + extra, env: env)
            let object = try #require(parseJSON(result.stdout) as? [String: Any], "\(result.stdout) \(result.stderr)")
            #expect(result.exit == 1)  // the catalog, at least
            let checks = try #require(object["checks"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: checks.map { ($0["name"] as? String ?? "", $0) })
        }

        let checks = try run()
        let clock = try #require(checks["clock"])
        #expect(clock["ok"] as? Bool == true && clock["skipped"] as? Bool == false, "\(clock)")
        let measured = try #require(clock["measured"] as? [String: Any], "\(clock)")
        let offset = try #require(measured["offset_ms"] as? Double)
        #expect(abs(offset - 1500) < 5, "offset \(offset) ms")
        #expect((measured["pongs"] as? Double ?? 0) >= 8)
        #expect((clock["detail"] as? String)?.hasPrefix("Your clock is 1.5 s behind Rooftop's") == true, "\(clock)")
        #expect((clock["note"] as? String)?.contains("NTP") == true)
        #expect(checks["firewall"]?["ok"] as? Bool == true)
        #expect((checks["firewall"]?["detail"] as? String)?.contains("'Rooftop' answered over UDP") == true)
        #expect(checks["audio"]?["ok"] as? Bool == true, "\(checks["audio"] ?? [:])")

        // No sound server: PulseAudio asked for, and nothing where it should be.
        let silent = try run(["--audio-driver", "pulse"], env: ["PULSE_SERVER": "unix:/nonexistent/pulse"])
        #expect(silent["audio"]?["ok"] as? Bool == false, "\(silent["audio"] ?? [:])")
        #expect((silent["audio"]?["detail"] as? String)?.hasPrefix("No sound output: ") == true)
        #expect((silent["audio"]?["fix"] as? String)?.contains("--audio-driver null") == true)

        // The DJ's machine drops every UDP datagram but mDNS: the station is announced and never answers.
        let djWall = ["iptables", "-A", "INPUT", "-i", "eth0", "-p", "udp", "!", "--dport", "5353", "-j", "DROP"]
        #expect(try lan.run(host: 1, djWall).exit == 0)
        let farWall = try run()
        #expect(farWall["firewall"]?["ok"] as? Bool == false, "\(farWall["firewall"] ?? [:])")
        #expect((farWall["firewall"]?["detail"] as? String)?.contains("does not answer over UDP") == true)
        #expect(farWall["clock"]?["ok"] as? Bool == false && farWall["clock"]?["measured"] == nil)
        #expect((farWall["clock"]?["fix"] as? String)?.contains("on the DJ's machine") == true)
        #expect(try lan.run(host: 1, ["iptables", "-D"] + djWall.dropFirst(2)).exit == 0)

        // This machine drops inbound UDP except on lo: its own rules say so, with the fix.
        let wall = ["iptables", "-A", "INPUT", "!", "-i", "lo", "-p", "udp", "-j", "DROP"]
        #expect(try lan.run(host: 2, wall).exit == 0)
        let walled = try run()
        let firewall = try #require(walled["firewall"])
        #expect(firewall["ok"] as? Bool == false, "\(firewall)")
        #expect((firewall["detail"] as? String)?.contains("(rule: -A INPUT ! -i lo -p udp -j DROP)") == true)
        #expect(
            (firewall["fix"] as? String)?.contains("sudo iptables -I INPUT -i eth0 -p udp --dport 5353 -j ACCEPT")
                == true)
        #expect(walled["clock"]?["measured"] == nil)
        #expect(try lan.run(host: 2, ["iptables", "-D"] + wall.dropFirst(2)).exit == 0)
        #expect(try run()["clock"]?["measured"] != nil)
        #expect(try Testbed.auditRootNamespace().isEmpty)
    }
}
