import PartyRadioNode
import Testing

@testable import PartyRadioCLI

/// `partyradio doctor`'s verdicts: each a pure function of what was probed.
@Suite struct DoctorCheckTests {
    @Test func verdictsSayWhatFailedAndTheFix() {
        let interface = DoctorCheck.interface(.success("eth0 (10.0.0.2)"))
        #expect(interface.ok && interface.detail == "Using eth0 (10.0.0.2)." && interface.fix == nil)
        let missing = DoctorCheck.interface(.failure(DoctorProbes.Failure("No interface 'wlan9'.")))
        #expect(
            !missing.ok && missing.detail == "No interface 'wlan9'." && missing.fix?.contains("--interface") == true)

        #expect(DoctorCheck.avahi(nil).ok)
        let avahi = DoctorCheck.avahi("Daemon not running")
        #expect(
            !avahi.ok && avahi.detail.hasSuffix("Daemon not running")
                && avahi.fix?.contains("systemctl start avahi-daemon") == true)

        #expect(DoctorCheck.multicast(.heard(afterMs: 2), interface: "eth0").detail.contains("came back in 2 ms"))
        let silent = DoctorCheck.multicast(.silent(afterMs: 3000), interface: "eth0")
        #expect(!silent.ok && silent.fix?.contains("iptables -I INPUT -i eth0 -d 239.255.0.0/16") == true)
        let failed = DoctorCheck.multicast(.failed("setsockopt(IP_ADD_MEMBERSHIP): ENODEV"), interface: "eth0")
        #expect(!failed.ok && failed.detail.contains("ENODEV"))

        #expect(DoctorCheck.catalog(.success(120), url: "https://itunes.apple.com").ok)
        let offline = DoctorCheck.catalog(.failure(DoctorProbes.Failure("Could not connect.")), url: "http://x")
        #expect(!offline.ok && offline.detail == "http://x did not answer: Could not connect.")
        #expect(offline.fix?.contains("local music plays without it") == true)
    }

    @Test func oneFailureMakesExitCodeOne() {
        let good = [DoctorCheck.avahi(nil), .catalog(.success(5), url: "u")]
        #expect(DoctorCheck.exitCode(good) == .success)
        #expect(DoctorCheck.exitCode(good + [.avahi("gone")]) == .failure)
    }

    @Test func textAndJSON() {
        let checks = [DoctorCheck.avahi(nil), .avahi("gone")]
        let text = DoctorCheck.text(checks)
        #expect(
            text.hasPrefix(
                "ok   avahi: avahi-daemon answers on D-Bus.\nFAIL avahi: avahi-daemon is not reachable: gone\n     fix: "
            ))
        let json = DoctorCheck.json(checks).rendered
        #expect(
            json.hasPrefix(
                #"{"ok":false,"checks":[{"name":"avahi","ok":true,"detail":"avahi-daemon answers on D-Bus.","fix":null},"#
            ))
    }

    @Test func parsing() throws {
        guard
            case .doctor(let options) = try Command.parse(["doctor", "--json", "--interface", "eth1", "--timeout", "2"])
        else { throw Failure() }
        #expect(options.json && options.network.interface == "eth1" && options.timeout == 2)
        #expect(options.iTunesURL == "https://itunes.apple.com")
        guard
            case .doctor(let pointed) = try Command.parse(
                ["doctor"], environment: ["PARTYRADIO_ITUNES_URL": "http://h:1"])
        else { throw Failure() }
        #expect(pointed.iTunesURL == "http://h:1")
        #expect(throws: UsageError.self) { try Command.parse(["doctor", "now"]) }
        #expect(throws: UsageError.self) { try Command.parse(["doctor", "--timeout", "0"]) }
        #expect(
            try Command.parse(["doctor", "-v", "--state-dir", "/s"]).common
                == CommonOptions(stateDir: "/s", verbose: true))
    }

    struct Failure: Error {}
}
