import PartyRadioCore
import PartyRadioNode

/// The verdicts on what a station needs beyond the network: its ports through the firewall, sound,
/// and the clock against a station on the air.
extension DoctorCheck {
    // MARK: Audio

    static let audioFix =
        "Install and start a sound server (sudo apt-get install pipewire-pulse, or pulseaudio), or pick an output "
        + "with --audio-driver alsa; a machine without speakers can use --audio-driver null or --no-audio."

    /// What playing a test tone gave; nil when `--no-audio` (or the config file) turns sound off.
    static func audio(_ probe: DoctorProbes.AudioProbe?) -> DoctorCheck {
        guard let probe else {
            return DoctorCheck(
                name: "audio", ok: true, detail: "Skipped: --no-audio is set, so nothing plays here.", skipped: true)
        }
        if probe.libraryMissing {
            return DoctorCheck(
                name: "audio", ok: false,
                detail: "No player: \(probe.error ?? "libmpv could not be loaded"), so listen and dj cannot play.",
                fix: "Install libmpv (sudo apt-get install libmpv2), or run listen and dj with --no-audio.")
        }
        if probe.noDevice {
            return DoctorCheck(
                name: "audio", ok: false,
                detail: "No sound output: there is no sound device (/dev/snd) and no PULSE_SERVER, so mpv would play "
                    + "through its null output and nothing would be heard.",
                fix: audioFix)
        }
        let asked = probe.requested.map { "the '\($0)' output" } ?? "an output (PipeWire, PulseAudio or ALSA)"
        if let error = probe.error {
            return DoctorCheck(
                name: "audio", ok: false, detail: "No sound output: mpv could not open \(asked): \(error).",
                fix: audioFix)
        }
        let opened = probe.opened ?? "?"
        if opened == "null" {
            if probe.requested == "null" {
                return DoctorCheck(
                    name: "audio", ok: true,
                    detail: "mpv's null output works: playback keeps time without sound (--audio-driver null).")
            }
            return DoctorCheck(
                name: "audio", ok: false,
                detail: "No sound output: mpv could not open \(asked) and fell back to null, so nothing would be "
                    + "heard.",
                fix: audioFix)
        }
        return DoctorCheck(name: "audio", ok: true, detail: "mpv played a test tone through its '\(opened)' output.")
    }

    // MARK: Clock

    /// What looking for a station and pinging it gave; nil when it could not be tried (`why`).
    static func clock(_ outcome: ClockProbeMachine.Outcome?, interface: String, why: String? = nil) -> DoctorCheck {
        func skip(_ detail: String) -> DoctorCheck {
            DoctorCheck(name: "clock", ok: true, detail: detail, skipped: true)
        }
        guard let outcome else { return skip("Skipped: \(why ?? "no station could be looked for").") }
        switch outcome {
        case .noStation:
            return skip("Skipped: no station is on the air on \(interface) to compare clocks with.")
        case .failed(let message):
            return skip("Skipped: stations could not be looked for (\(message)).")
        case .silent(let station):
            return DoctorCheck(
                name: "clock", ok: false,
                detail: "'\(station.name)' is announced at \(station.address) but answered no query, so its clock "
                    + "could not be read.",
                fix: unicastFix(station, interface: interface))
        case .noPong(let station, let sent):
            return DoctorCheck(
                name: "clock", ok: false,
                detail: "'\(station.name)' at \(station.address) answered none of \(sent) time pings.",
                fix: unicastFix(station, interface: interface))
        case .measured(let station, let reading):
            let offsetMs = Double(reading.offsetNs) / 1e6
            let rttMs = Double(reading.minRoundTripNs) / 1e6
            let relation = offsetMs >= 0 ? "behind" : "ahead of"
            let amount =
                abs(offsetMs) >= 1000 ? "\(rounded(abs(offsetMs) / 1000, 1)) s" : "\(rounded(abs(offsetMs), 1)) ms"
            var check = DoctorCheck(
                name: "clock", ok: true,
                detail: "Your clock is \(amount) \(relation) \(station.name)'s (round trip \(rounded(rttMs, 2)) ms, "
                    + "\(reading.received) of \(reading.sent) pings answered).")
            if abs(offsetMs) >= 500 {
                check.note =
                    "Playback is corrected for any offset, but a clock this far off means it is not kept in time: "
                    + "consider NTP (sudo apt-get install systemd-timesyncd) on this machine and the DJ's."
            }
            check.measured = [
                "offset_ms": rounded(offsetMs, 3), "rtt_ms": rounded(rttMs, 3),
                "rtt_median_ms": rounded(Double(reading.medianRoundTripNs) / 1e6, 3),
                "pings": Double(reading.sent), "pongs": Double(reading.received),
            ]
            return check
        }
    }

    private static func unicastFix(_ station: ClockProbeMachine.Station, interface: String) -> String {
        "Let UDP through on both machines: here sudo iptables -I INPUT -i \(interface) -p udp --dport 1024:65535 "
            + "-j ACCEPT, and on the DJ's machine the same for its port \(station.address.port)."
    }

    // MARK: Firewall

    /// The firewall: the rules read (if any), what INPUT does with each kind of traffic a station
    /// needs, and whether a station on the air answered over UDP.
    static func firewall(
        _ reading: DoctorProbes.FirewallReading, verdicts: [(FirewallTraffic, FirewallRules.Verdict)],
        station: ClockProbeMachine.Outcome?, interface: String
    ) -> DoctorCheck {
        var dropped: [(FirewallTraffic, String)] = []
        var unsure: [(FirewallTraffic, String)] = []
        for (traffic, verdict) in verdicts {
            switch verdict {
            case .accepted: break
            case .dropped(let rule):
                if !dropped.contains(where: { $0.0 == traffic }) { dropped.append((traffic, rule)) }
            case .mayDrop(let rule): if !unsure.contains(where: { $0.0 == traffic }) { unsure.append((traffic, rule)) }
            }
        }
        if !dropped.isEmpty {
            let kinds = dropped.map(\.0)
            return DoctorCheck(
                name: "firewall", ok: false,
                detail: "The firewall drops \(list(kinds.map(\.label))) coming in on \(interface) (rule: "
                    + "\(dropped[0].1)).",
                fix: "Let them in: " + kinds.map { $0.allowCommand(interface: interface) }.joined(separator: " && ")
                    + " (or the same in ufw or firewalld).")
        }
        var answered: String?
        switch station {
        case .silent(let found), .noPong(let found, _):
            return DoctorCheck(
                name: "firewall", ok: false,
                detail: "'\(found.name)' is announced at \(found.address) but does not answer over UDP: a firewall "
                    + "here or on the DJ's machine drops it.",
                fix: unicastFix(found, interface: interface))
        case .measured(let found, _):
            answered = "'\(found.name)' answered over UDP"
        case .noStation, .failed, nil:
            break
        }
        var check: DoctorCheck
        switch reading {
        case .rules(let source):
            check = DoctorCheck(
                name: "firewall", ok: true,
                detail: "The rules (\(source)) let in mDNS, the stations' groups, UDP and TCP on \(interface)"
                    + (answered.map { ", and \($0)." } ?? "."))
            if !unsure.isEmpty {
                check.note =
                    "A rule may drop some \(list(unsure.map(\.0.label))), depending on what it matches: \(unsure[0].1)"
            }
        case .noTool, .unreadable:
            let why =
                if case .unreadable(let message) = reading { "The firewall rules could not be read (\(message))" } else
                {
                    "There is no iptables or nft to read firewall rules with"
                }
            check = DoctorCheck(name: "firewall", ok: true, detail: why + (answered.map { "; \($0)." } ?? "."))
            if answered == nil {
                check.note =
                    "Run it as root (sudo partyradio doctor) to check the rules, or with a station on the air to "
                    + "test the way through."
            }
        }
        return check
    }

    private static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }

    private static func rounded(_ value: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// `doctor --live SOURCE`: whether the live source opens (nil problem), else what is wrong and the fix.
    static func live(_ source: LiveSource, problem: (detail: String, fix: String)?) -> DoctorCheck {
        guard let problem else {
            let detail =
                switch source {
                case .stationSink: "The sound server answers: dj --live makes the station's sink there."
                case .pulseSource(let name): "The sound server has the source \(name)."
                case .pipe(let path, _): "The live pipe \(path) is there and readable."
                case .standardInput: "Standard input is read as it comes; nothing to check before."
                }
            return DoctorCheck(name: "live", ok: true, detail: detail)
        }
        return DoctorCheck(name: "live", ok: false, detail: problem.detail + ".", fix: problem.fix)
    }
}

extension DoctorCheck {
    /// `doctor --speaker`: whether a live station can play here (through the sound server's
    /// default output), as a speaker or listener plays one.
    static func liveOutput(_ output: Result<String, LiveSourceProbe.OutputProblem>) -> DoctorCheck {
        switch output {
        case .success(let sink):
            return DoctorCheck(
                name: "live output", ok: true,
                detail: "The sound server answers: a live station plays into its output \(ShownText.cleaned(sink)).")
        case .failure(let problem):
            return DoctorCheck(
                name: "live output", ok: false,
                detail: problem.detail + " (a live station plays only through a PulseAudio or PipeWire server).",
                fix: problem.fix)
        }
    }
}

extension FirewallTraffic {
    /// As the firewall check names it.
    var label: String {
        switch self {
        case .mdns: "mDNS (5353/udp)"
        case .groups: "the stations' multicast groups (UDP 40000–49999)"
        case .unicast: "UDP to this machine's ports"
        case .http: "TCP to its high ports (a DJ's music and web page)"
        }
    }

    func allowCommand(interface: String) -> String {
        switch self {
        case .mdns: "sudo iptables -I INPUT -i \(interface) -p udp --dport 5353 -j ACCEPT"
        case .groups: "sudo iptables -I INPUT -i \(interface) -d 239.255.0.0/16 -p udp -j ACCEPT"
        case .unicast: "sudo iptables -I INPUT -i \(interface) -p udp --dport 1024:65535 -j ACCEPT"
        case .http: "sudo iptables -I INPUT -i \(interface) -p tcp --dport 1024:65535 -j ACCEPT"
        }
    }
}
