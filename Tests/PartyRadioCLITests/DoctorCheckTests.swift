import PartyRadioCore
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
                #"{"ok":false,"checks":[{"name":"avahi","ok":true,"skipped":false,"detail":"avahi-daemon answers on D-Bus.","#
                    + #""fix":null,"note":null},"#
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
                ["doctor"], knobs: EnvironmentKnobs(["PARTYRADIO_ITUNES_URL": "http://h:1"]))
        else { throw Failure() }
        #expect(pointed.iTunesURL == "http://h:1")
        #expect(throws: UsageError.self) { try Command.parse(["doctor", "now"]) }
        #expect(throws: UsageError.self) { try Command.parse(["doctor", "--timeout", "0"]) }
        #expect(
            try Command.parse(["doctor", "-v", "--state-dir", "/s"]).common
                == CommonOptions(stateDir: "/s", verbose: true))
    }

    @Test func newOptionsAndTheConfigFile() throws {
        guard
            case .doctor(let options) = try Command.parse(
                ["doctor", "--audio-driver", "pulse", "--no-audio", "--port", "41000"])
        else { throw Failure() }
        #expect(options.audioDriver == "pulse" && options.noAudio && options.port == 41000)
        #expect(throws: UsageError.self) { try Command.parse(["doctor", "--port", "70000"]) }
        let file = try ConfigFile(parsing: "audio-driver = alsa\nno-audio = true\ninterface = wlan0\nport = 4000\n")
        #expect(
            file.arguments(for: "doctor", given: ["--audio-driver", "null"])
                == ["--no-audio", "--interface", "wlan0", "--port", "4000"])
    }

    // MARK: Audio

    @Test func audioVerdicts() {
        let played = DoctorCheck.audio(.init(requested: nil, opened: "pulse", error: nil))
        #expect(played.ok && played.detail == "mpv played a test tone through its 'pulse' output.")
        let null = DoctorCheck.audio(.init(requested: "null", opened: "null", error: nil))
        #expect(null.ok && null.detail.contains("--audio-driver null"))
        // The default falling back to null is no sound at all.
        let fellBack = DoctorCheck.audio(.init(requested: nil, opened: "null", error: nil))
        #expect(!fellBack.ok && fellBack.detail.hasPrefix("No sound output: ") && fellBack.detail.contains("null"))
        #expect(fellBack.fix == DoctorCheck.audioFix)
        let broken = DoctorCheck.audio(
            .init(requested: "pulse", opened: nil, error: "audio output initialization failed"))
        #expect(
            broken.detail
                == "No sound output: mpv could not open the 'pulse' output: audio output initialization failed.")
        #expect(broken.fix?.contains("pipewire") == true && broken.fix?.contains("--audio-driver null") == true)
        let noDevice = DoctorCheck.audio(.init(requested: nil, opened: nil, error: nil, noDevice: true))
        #expect(!noDevice.ok && noDevice.detail.contains("/dev/snd"))
        let off = DoctorCheck.audio(nil)
        #expect(off.ok && off.skipped && off.fix == nil)
        // Without libmpv nothing plays, whatever the output: the fix is installing it.
        let missing = DoctorCheck.audio(
            .init(
                requested: nil, opened: nil,
                error: "libmpv is not installed: sudo apt install libmpv2 (libmpv.so.2: cannot open shared object)",
                libraryMissing: true))
        #expect(!missing.ok && missing.detail.hasPrefix("No player: libmpv is not installed"))
        #expect(missing.fix?.contains("libmpv2") == true && missing.fix?.contains("--no-audio") == true)
    }

    // MARK: Clock

    let rooftop = ClockProbeMachine.Station(name: "Rooftop", address: PeerAddress(host: "10.0.0.1", port: 41000))

    @Test func clockVerdicts() {
        let behind = DoctorCheck.clock(
            .measured(
                rooftop,
                ClockReading(
                    offsetNs: 2_104_300_000, minRoundTripNs: 412_000, medianRoundTripNs: 500_000, received: 8, sent: 8)),
            interface: "eth0")
        #expect(behind.ok && !behind.skipped)
        #expect(behind.detail == "Your clock is 2.1 s behind Rooftop's (round trip 0.41 ms, 8 of 8 pings answered).")
        #expect(behind.note?.contains("consider NTP") == true)
        #expect(behind.measured["offset_ms"] == 2104.3 && behind.measured["rtt_ms"] == 0.412)
        let close = DoctorCheck.clock(
            .measured(
                rooftop,
                ClockReading(
                    offsetNs: -3_250_000, minRoundTripNs: 200_000, medianRoundTripNs: 300_000, received: 7, sent: 9)),
            interface: "eth0")
        #expect(close.detail.hasPrefix("Your clock is 3.3 ms ahead of Rooftop's") && close.note == nil)

        let none = DoctorCheck.clock(.noStation, interface: "eth0")
        #expect(none.ok && none.skipped && none.detail.contains("no station is on the air on eth0"))
        let noAvahi = DoctorCheck.clock(nil, interface: "eth0", why: "without avahi-daemon no station can be found")
        #expect(noAvahi.skipped && noAvahi.detail == "Skipped: without avahi-daemon no station can be found.")

        let silent = DoctorCheck.clock(.silent(rooftop), interface: "eth0")
        #expect(
            !silent.ok && silent.detail.contains("10.0.0.1:41000") && silent.fix?.contains("its port 41000") == true)
        let noPong = DoctorCheck.clock(.noPong(rooftop, sent: 30), interface: "eth0")
        #expect(!noPong.ok && noPong.detail.contains("none of 30 time pings"))
        #expect(noPong.fix?.contains("iptables -I INPUT -i eth0 -p udp") == true)
    }

    // MARK: Firewall

    @Test func firewallVerdicts() {
        let interface = NetworkInterfaceStub.packets
        let open = FirewallRules(iptables: "-P INPUT ACCEPT")
        let passed = DoctorCheck.firewall(
            .rules(""), verdicts: interface.map { ($0.0, open.verdict(for: $0.1)) },
            station: .measured(
                rooftop, ClockReading(offsetNs: 0, minRoundTripNs: 1, medianRoundTripNs: 1, received: 1, sent: 1)),
            interface: "eth0")
        #expect(passed.ok && passed.detail.hasSuffix("and 'Rooftop' answered over UDP."))

        let rule = "-A INPUT ! -i lo -p udp -j DROP"
        let walled = FirewallRules(iptables: rule)
        let failed = DoctorCheck.firewall(
            .rules(rule), verdicts: interface.map { ($0.0, walled.verdict(for: $0.1)) }, station: .noStation,
            interface: "eth0")
        #expect(!failed.ok)
        #expect(
            failed.detail
                == "The firewall drops mDNS (5353/udp), the stations' multicast groups (UDP 40000–49999) and UDP to "
                + "this machine's ports coming in on eth0 (rule: \(rule)).")
        #expect(
            failed.fix?.hasPrefix("Let them in: sudo iptables -I INPUT -i eth0 -p udp --dport 5353 -j ACCEPT && ")
                == true)
        #expect(failed.fix?.contains("--dport 1024:65535") == true && failed.fix?.contains("-p tcp") == false)

        // Rules that let it all in, but a station that does not answer: something on the way drops it.
        let silent = DoctorCheck.firewall(.rules(""), verdicts: [], station: .silent(rooftop), interface: "eth0")
        #expect(!silent.ok && silent.detail.contains("does not answer over UDP") && silent.fix != nil)

        let unreadable = DoctorCheck.firewall(
            .unreadable("iptables -S: Permission denied (you must be root)"), verdicts: [], station: .noStation,
            interface: "eth0")
        #expect(
            unreadable.ok && unreadable.detail.contains("could not be read")
                && unreadable.note?.contains("root") == true)
        let maybe = FirewallRules(
            iptables: "-A INPUT -m statistic --mode random --probability 0.5 -j DROP")
        let unsure = DoctorCheck.firewall(
            .rules(""), verdicts: interface.map { ($0.0, maybe.verdict(for: $0.1)) }, station: nil, interface: "eth0")
        #expect(unsure.ok && unsure.note?.contains("may drop") == true)
    }

    @Test func textShowsSkipsAndNotes() {
        var noted = DoctorCheck(name: "clock", ok: true, detail: "Off.")
        noted.note = "Use NTP."
        let text = DoctorCheck.text([DoctorCheck.clock(.noStation, interface: "eth0"), noted])
        #expect(
            text
                == "skip clock: Skipped: no station is on the air on eth0 to compare clocks with.\nok   clock: Off.\n     note: Use NTP."
        )
        #expect(DoctorCheck.exitCode([DoctorCheck.clock(.noStation, interface: "eth0")]) == .success)
        var measured = noted
        measured.measured = ["rtt_ms": 0.5, "offset_ms": -1]
        #expect(
            DoctorCheck.json([measured]).rendered.hasSuffix(
                #""note":"Use NTP.","measured":{"offset_ms":-1.0,"rtt_ms":0.5}}]}"#))
    }

    struct Failure: Error {}
}

/// The packets the firewall check asks about, for an eth0 at 10.0.0.2.
enum NetworkInterfaceStub {
    static var packets: [(FirewallTraffic, FirewallRules.Packet)] {
        let own = FirewallRules.ipv4("10.0.0.2")!
        let peer = FirewallRules.ipv4("10.0.0.1")!
        func packet(_ proto: FirewallRules.Packet.Proto, _ port: UInt16, _ to: UInt32) -> FirewallRules.Packet {
            FirewallRules.Packet(proto: proto, port: port, interface: "eth0", source: peer, destination: to)
        }
        return [
            (.mdns, packet(.udp, 5353, 0xE000_00FB)), (.groups, packet(.udp, 45_000, 0xEFFF_0102)),
            (.unicast, packet(.udp, 33_000, own)), (.http, packet(.tcp, 33_000, own)),
        ]
    }
}
