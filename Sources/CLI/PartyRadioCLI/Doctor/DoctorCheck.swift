import PartyRadioCore
import PartyRadioNode

/// One thing `partyradio doctor` checked: what it found, in one sentence, and the fix when it failed.
/// Each check is a pure function of what was probed, so every verdict is unit-tested.
public struct DoctorCheck: Equatable, Sendable {
    /// Short name (`interface`, `avahi`, `multicast`, `firewall`, `audio`, `clock`, `catalog`), the JSON key.
    public var name: String
    /// False only when it failed (a skipped check is not a failure).
    public var ok: Bool
    /// What was found, one sentence.
    public var detail: String
    /// What to do, when it failed.
    public var fix: String?
    /// The check could not apply here (no station on the air for the clock).
    public var skipped = false
    /// Advice on a check that passed (a clock far off, rules that could not be read).
    public var note: String?
    /// Numbers behind the verdict, for `--json` (`offset_ms`, `rtt_ms`).
    public var measured: [String: Double] = [:]

    /// What probing the network interface gave: its description, or why none is usable.
    static func interface(_ probe: Result<String, DoctorProbes.Failure>) -> DoctorCheck {
        switch probe {
        case .success(let description): DoctorCheck(name: "interface", ok: true, detail: "Using \(description).")
        case .failure(let problem):
            DoctorCheck(
                name: "interface", ok: false, detail: problem.message,
                fix: "Pick an interface that is up, has an IPv4 address and can multicast: --interface NAME.")
        }
    }

    /// What connecting to avahi-daemon gave: nil when it answered, else its error.
    static func avahi(_ error: String?) -> DoctorCheck {
        guard let error else {
            return DoctorCheck(name: "avahi", ok: true, detail: "avahi-daemon answers on D-Bus.")
        }
        return DoctorCheck(
            name: "avahi", ok: false, detail: "avahi-daemon is not reachable: \(error)",
            fix: "Install and start it: sudo apt-get install avahi-daemon && sudo systemctl start avahi-daemon.")
    }

    /// How the multicast self-test went: a datagram sent to a test group on the interface (TTL 1,
    /// looped back) and heard again, or not.
    enum MulticastProbe: Equatable, Sendable {
        case heard(afterMs: Int)
        case silent(afterMs: Int)
        case failed(String)
    }

    static func multicast(_ probe: MulticastProbe, interface: String) -> DoctorCheck {
        switch probe {
        case .heard(let ms):
            DoctorCheck(
                name: "multicast", ok: true, detail: "A multicast datagram on \(interface) came back in \(ms) ms.")
        case .silent(let ms):
            DoctorCheck(
                name: "multicast", ok: false,
                detail: "A multicast datagram sent on \(interface) did not come back within \(ms) ms.",
                fix: "Let multicast in: allow UDP to 239.255.0.0/16 on \(interface) in the firewall "
                    + "(e.g. sudo iptables -I INPUT -i \(interface) -d 239.255.0.0/16 -p udp -j ACCEPT).")
        case .failed(let error):
            DoctorCheck(
                name: "multicast", ok: false, detail: "The multicast self-test could not run: \(error)",
                fix: "Check that \(interface) is up and can multicast (ip link show \(interface)), or pick another "
                    + "with --interface.")
        }
    }

    /// What asking the catalog gave: the time it took, or the error.
    static func catalog(_ probe: Result<Int, DoctorProbes.Failure>, url: String) -> DoctorCheck {
        switch probe {
        case .success(let ms): DoctorCheck(name: "catalog", ok: true, detail: "\(url) answered in \(ms) ms.")
        case .failure(let error):
            DoctorCheck(
                name: "catalog", ok: false, detail: "\(url) did not answer: \(error.message)",
                fix: "Check the internet connection and proxy, or point --itunes-url elsewhere; local music "
                    + "plays without it.")
        }
    }

    /// The exit code for these checks: 1 if any failed.
    static func exitCode(_ checks: [DoctorCheck]) -> ExitCode { checks.allSatisfy(\.ok) ? .success : .failure }

    /// The report as a terminal shows it: one line per check, the fix under a failed one.
    static func text(_ checks: [DoctorCheck]) -> String {
        checks.map { check in
            "\(check.skipped ? "skip" : check.ok ? "ok  " : "FAIL") \(check.name): \(check.detail)"
                + (check.fix.map { "\n     fix: \($0)" } ?? "") + (check.note.map { "\n     note: \($0)" } ?? "")
        }.joined(separator: "\n")
    }

    /// The report as `--json`: `ok` and every check with `name`, `ok`, `skipped`, `detail`, `fix`
    /// and `note` (null when there is none), and `measured` where the check measured something.
    static func json(_ checks: [DoctorCheck]) -> JSON {
        let rows: [JSON] = checks.map { check in
            let fix: JSON = check.fix.map { JSON.string($0) } ?? .null
            let note: JSON = check.note.map { JSON.string($0) } ?? .null
            var fields: [(String, JSON)] = [
                ("name", .string(check.name)), ("ok", .bool(check.ok)), ("skipped", .bool(check.skipped)),
                ("detail", .string(check.detail)), ("fix", fix), ("note", note),
            ]
            if !check.measured.isEmpty {
                fields.append(
                    ("measured", .object(check.measured.sorted { $0.key < $1.key }.map { ($0.key, .double($0.value)) }))
                )
            }
            return .object(fields)
        }
        return .object([("ok", .bool(checks.allSatisfy(\.ok))), ("checks", .array(rows))])
    }
}
