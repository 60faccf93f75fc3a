/// Why a datagram was dropped. Every case is counted by ``DropCounters``; none is fatal.
public enum WireError: Error, Equatable, Sendable {
    case truncated
    case oversized(Int)
    case badMagic
    case unknownVersion(UInt8)
    case unknownKind(UInt8)
    case malformed(String)
    case trailingBytes(Int)
    case badSignature
    /// A session MAC that does not check out under the key the sender shares with this station
    /// (or a MAC this node takes from no one).
    case badMAC
    case wrongStation
    case replayed
    case unexpectedSender
    /// Its source address sent more than its share of datagrams to verify.
    case rateLimited
    /// More datagrams to verify than the node's budget, from a sender it does not know.
    case overBudget
    /// A sealed datagram (a private station's) and no key to open it: not ours to read.
    case sealed
    /// A sealed datagram that does not open under our key: another code, or altered on the way.
    case badSeal
    /// A datagram in clear at a private station, where everything must come sealed.
    case unsealed
    /// Not verified, answered with a cookie challenge instead: the budget was short, and the sender
    /// (unknown here) showed no valid admission cookie.
    case challenged

    /// A short stable name, used as the counter key in `--json-events` output.
    public var counterName: String {
        switch self {
        case .truncated: "truncated"
        case .oversized: "oversized"
        case .badMagic: "bad_magic"
        case .unknownVersion: "unknown_version"
        case .unknownKind: "unknown_kind"
        case .malformed, .trailingBytes: "malformed"
        case .badSignature: "bad_signature"
        case .badMAC: "bad_mac"
        case .wrongStation: "wrong_station"
        case .replayed: "replayed"
        case .unexpectedSender: "unexpected_sender"
        case .rateLimited: "rate_limited"
        case .overBudget: "over_budget"
        case .sealed: "sealed"
        case .badSeal: "bad_seal"
        case .unsealed: "unsealed"
        case .challenged: "challenged"
        }
    }
}

/// Counts of dropped datagrams by reason.
public struct DropCounters: Sendable, Equatable {
    public private(set) var counts: [String: Int] = [:]
    public init() {}
    public mutating func record(_ error: WireError) { counts[error.counterName, default: 0] += 1 }
    /// A drop that is not a datagram's: e.g. `impostor_advert`, a DNS-SD advert whose ID is not
    /// its key's.
    public mutating func record(reason: String) { counts[reason, default: 0] += 1 }
    public var total: Int { counts.values.reduce(0, +) }

    /// Both counts added up, by reason.
    public func merged(with other: DropCounters) -> DropCounters {
        var sum = self
        sum.counts.merge(other.counts, uniquingKeysWith: +)
        return sum
    }
}
