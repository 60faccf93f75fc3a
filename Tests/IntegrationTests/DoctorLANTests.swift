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
        let doctor = ["doctor", "--json", "--timeout", "1", "--itunes-url", "http://127.0.0.1:9"]
        func run() throws -> (exit: Int32, checks: [String: [String: Any]]) {
            let result = try lan.partyradio(host: 1, doctor, role: "doctor")
            let object = try #require(parseJSON(result.stdout) as? [String: Any], "\(result.stdout) \(result.stderr)")
            let checks = try #require(object["checks"] as? [[String: Any]])
            return (result.exit, Dictionary(uniqueKeysWithValues: checks.map { ($0["name"] as? String ?? "", $0) }))
        }
        let first = try run()
        #expect(first.exit == 1)
        #expect(first.checks.keys.sorted() == ["avahi", "catalog", "interface", "multicast"])
        for name in ["interface", "avahi", "multicast"] {
            #expect(first.checks[name]?["ok"] as? Bool == true, "\(name): \(first.checks[name] ?? [:])")
        }
        #expect(first.checks["catalog"]?["ok"] as? Bool == false)
        #expect((first.checks["catalog"]?["fix"] as? String)?.isEmpty == false)

        // A firewall that drops what comes in on eth0: the self-test does not come back.
        try lan.loss(host: 1, percent: 100, direction: .inbound)
        let walled = try run()
        #expect(walled.checks["multicast"]?["ok"] as? Bool == false, "\(walled.checks["multicast"] ?? [:])")
        #expect((walled.checks["multicast"]?["fix"] as? String)?.contains("iptables") == true)
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
}
