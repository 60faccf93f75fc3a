/// How long a station's records in a unicast DNS-SD domain count (docs/NETWORKS.md).
///
/// A DJ that quits deletes its records, but one that is killed (SIGKILL, a power cut) cannot. So
/// the DJ stamps its TXT record there with an expiry, `lease=<Unix seconds>`, renews it every
/// ``refreshSeconds`` and keeps the records' TTL as short, and browsers drop a station whose lease
/// has passed (allowing ``graceSeconds`` of clock offset between the DJ and the guest). A DJ
/// starting takes over its name from records whose lease has passed. Pure: the caller gives the
/// time.
public struct DNSLease: Sendable, Equatable {
    /// The TXT string's key. The mDNS TXT record has no such key; the lease is added to the
    /// domain's copy only and taken off again before the advert is read.
    public static let key = "lease"
    /// A station is gone this long after it was last renewed, unless it is renewed again.
    public static let defaultSeconds = 60
    /// The shortest lease (a test setting): below it renewals would be more DNS traffic than use.
    public static let minimumSeconds = 8
    /// How far a guest's clock may be behind the DJ's before it drops a live station early, or
    /// ahead before it keeps a dead one longer.
    public static let graceSeconds: Int64 = 5

    /// The lease's length in seconds.
    public let seconds: Int

    public init(seconds: Int = DNSLease.defaultSeconds) {
        self.seconds = max(Self.minimumSeconds, seconds)
    }

    /// How often the DJ renews its records: four times a lease, so that a renewal that is lost
    /// (a server that does not answer for a while) still leaves the station listed.
    public var refreshSeconds: Int { max(2, seconds / 4) }

    /// The TTL of the records: no longer than a renewal period, so that a resolver's cache never
    /// hands out a lease older than two periods (a 60 s lease: renewed every 15 s, cached 15 s at
    /// most, so a guest sees at least 30 s left on a live station).
    public var ttl: UInt32 { UInt32(refreshSeconds) }

    /// The TXT string that says the records count until `now` plus the lease.
    public func stamp(now unixSeconds: Int64) -> String { "\(Self.key)=\(unixSeconds + Int64(seconds))" }

    /// What a TXT record from the domain says about its lease.
    public enum Stamp: Hashable, Sendable {
        /// No lease string (a DJ from before leases): the records count until they are deleted.
        case none
        /// Good until this Unix time.
        case until(Int64)
        /// A lease string that is not one plain decimal number, or more than one: the record is
        /// not to be trusted.
        case malformed
    }

    /// Splits the lease off a TXT record from the domain: the advert's own strings in their order,
    /// and the lease.
    public static func split(_ txt: [String]) -> (advert: [String], stamp: Stamp) {
        var advert: [String] = []
        var stamp = Stamp.none
        for string in txt {
            // Bytes, not characters: a combining mark after "=" must not hide the key.
            guard string.utf8.starts(with: (key + "=").utf8) || string.utf8.elementsEqual(key.utf8) else {
                advert.append(string)
                continue
            }
            guard stamp == .none, let value = parse(string.utf8.dropFirst(key.utf8.count + 1)) else {
                stamp = .malformed
                continue
            }
            stamp = .until(value)
        }
        return (advert, stamp)
    }

    /// One to twelve ASCII digits (Unix seconds until the year 33658).
    private static func parse(_ digits: Substring.UTF8View) -> Int64? {
        guard (1...12).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }

    /// Whether records with this stamp count no more at `now` (the guest's Unix time).
    public static func hasPassed(_ stamp: Stamp, now unixSeconds: Int64) -> Bool {
        switch stamp {
        case .none: false
        case .until(let expiry): unixSeconds > expiry + graceSeconds
        case .malformed: true
        }
    }
}
