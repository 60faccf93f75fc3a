/// Cheap rejection before the expensive check: decides, per datagram that passed decoding and the
/// sender policy, whether it may cost an Ed25519 verification. A flood of forged datagrams then
/// costs a hash lookup each, not a signature check, and the node keeps its snapshot rate and sync.
///
/// Two limits, both pure arithmetic on the node's clock:
/// - **per source address**, a token bucket (``perAddressRate`` a second, bursts of
///   ``perAddressBurst``): one machine cannot make the node verify more than its share;
/// - **in all**, ``verificationsPerSecond``: senders spread over many (spoofed) addresses cannot
///   either. Over it, only senders already known (accepted before, from the same address) are
///   verified, so listeners already in the room keep their heartbeats and time pings.
///
/// Every table is bounded (``maxAddresses``; when full it starts again).
public struct SenderGate: Sendable {
    public static let maxAddresses = 4096

    public struct Limits: Sendable, Equatable {
        public var perAddressRate: Int
        public var perAddressBurst: Int
        public var verificationsPerSecond: Int

        /// A listener sends a heartbeat a second and a few time pings; a guest's commands retry
        /// five times a second: 200 a second per address leaves room for a whole household.
        public init(perAddressRate: Int = 200, perAddressBurst: Int = 400, verificationsPerSecond: Int = 4000) {
            self.perAddressRate = max(1, perAddressRate)
            self.perAddressBurst = max(1, perAddressBurst)
            self.verificationsPerSecond = max(1, verificationsPerSecond)
        }
    }

    public enum Verdict: Equatable, Sendable {
        case verify
        case rateLimited
        case overBudget
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var at: LocalTime
    }

    public let limits: Limits
    private var buckets: [String: Bucket] = [:]
    /// Where each known sender was last accepted from.
    private var knownFrom: [PublicKey: String] = [:]
    private var windowStart = LocalTime(ns: .min / 2)
    private var verifiedInWindow = 0

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Whether a datagram from `sender` at `host` may be verified at `now`; spends its share if so.
    public mutating func admit(sender: PublicKey, host: String, now: LocalTime) -> Verdict {
        var bucket = buckets[host] ?? Bucket(tokens: Double(limits.perAddressBurst), at: now)
        let elapsed = Double(max(0, now - bucket.at)) / 1e9
        bucket.tokens = min(Double(limits.perAddressBurst), bucket.tokens + elapsed * Double(limits.perAddressRate))
        bucket.at = now
        defer { remember(host, bucket) }
        guard bucket.tokens >= 1 else { return .rateLimited }
        if now - windowStart >= Nanos.seconds(1) {
            windowStart = now
            verifiedInWindow = 0
        }
        if verifiedInWindow >= limits.verificationsPerSecond && knownFrom[sender] != host { return .overBudget }
        bucket.tokens -= 1
        verifiedInWindow += 1
        return .verify
    }

    /// A datagram from `sender` at `host` passed every check: the sender is known there.
    public mutating func accepted(sender: PublicKey, host: String) {
        if knownFrom[sender] == nil && knownFrom.count >= Self.maxAddresses { knownFrom.removeAll() }
        knownFrom[sender] = host
    }

    private mutating func remember(_ host: String, _ bucket: Bucket) {
        // Full (many addresses, likely spoofed): start again; each address then gets one burst,
        // and the budget in all still holds. O(1) amortised, where finding the oldest would cost
        // a scan per datagram under the very flood this is for.
        if buckets[host] == nil && buckets.count >= Self.maxAddresses { buckets.removeAll(keepingCapacity: true) }
        buckets[host] = bucket
    }
}
