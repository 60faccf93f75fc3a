/// Why a guest left out a record it read in a unicast DNS-SD domain (`--domain`,
/// docs/NETWORKS.md). A domain's records come from a DNS server anyone with the zone's key may
/// update, so they are untrusted input like a datagram: each kind of refusal is counted by reason
/// (``DropCounters``, docs/PROTOCOL.md "What receivers drop"), once for as long as it lasts.
public enum DomainDrop: String, CaseIterable, Hashable, Sendable {
    /// A PTR record whose target is no service instance name.
    case badPTR = "dns_bad_ptr"
    /// An SRV record with the wrong fields, a port that is not two bytes or a target that is no
    /// name.
    case badSRV = "dns_bad_srv"
    /// A TXT string whose length byte does not match its data: that string is left out.
    case badTXT = "dns_bad_txt"
    /// A `lease=` string that is not one plain number, or more than one: the station is left out.
    case badLease = "dns_bad_lease"
    /// A lease that has passed (with ``DNSLease/graceSeconds`` for clocks): a DJ that was killed.
    case leasePassed = "dns_lease_passed"
    /// An A or AAAA record whose data is no address of its family: that address is left out.
    case badAddress = "dns_bad_address"
    /// Addresses, but none in a family this node speaks (an IPv6-only DJ for an IPv4-only guest).
    case noUsableAddress = "dns_no_usable_address"

    /// The counter's name (`--json-events`, `dropped`).
    public var counterName: String { rawValue }

    /// What was wrong, for the log (`-v`).
    public var what: String {
        switch self {
        case .badPTR: "a PTR record that names no instance"
        case .badSRV: "a malformed SRV record"
        case .badTXT: "a malformed TXT string (left out, the rest used)"
        case .badLease: "a malformed lease"
        case .leasePassed: "a lease that has passed"
        case .badAddress: "an address record that is no address (left out)"
        case .noUsableAddress: "no address in a family this node speaks"
        }
    }

    /// Whether the station is left out whole for it (else only the bad part is).
    public var leavesOut: Bool { self != .badTXT && self != .badAddress }

    /// Why a station with this lease is left out at `now` (Unix seconds), if it is.
    public static func judge(_ lease: DNSLease.Stamp, now: Int64) -> DomainDrop? {
        switch lease {
        case .malformed: .badLease
        case .until where DNSLease.hasPassed(lease, now: now): .leasePassed
        case .none, .until: nil
        }
    }
}
