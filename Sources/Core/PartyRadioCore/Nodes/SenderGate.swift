/// Cheap rejection before the expensive check: decides, per datagram that passed decoding and the
/// sender policy, whether it may cost an Ed25519 verification. A flood of forged datagrams then
/// costs a hash lookup each, not a signature check, and the node keeps its snapshot rate and sync.
///
/// The limits, all pure arithmetic on the node's clock:
/// - **per source address**, a token bucket (``Limits/perAddressRate`` a second, bursts of
///   ``Limits/perAddressBurst``): one machine cannot make the node verify more than its share;
/// - **in all**, ``Limits/verificationsPerSecond``, of which senders that showed nothing may use
///   ``Limits/openPerSecond``: senders spread over many (spoofed) addresses cannot exceed it.
///   Over it, senders already known (accepted before, from the same address) are still verified,
///   so listeners already in the room keep their heartbeats and time pings;
/// - **admission cookies** for the rest: once the open share is spent, a sender it does not know
///   is answered with a cookie challenge (``Verdict/challenge(_:)``: at most
///   ``Limits/challengesPerAddress`` a second to one address, ``Limits/challengesPerSecond`` in
///   all) rather than verified, and a datagram that shows its valid cookie (``AddressCookies``:
///   the sender reads at its address) is verified from the ``Limits/reservedPerSecond`` reserve, at
///   most ``Limits/reservedPerAddress`` of it for one address a second. A flood from addresses that
///   do not read their answers never reaches the reserve, so a new guest's first exchange gets
///   through it one round trip later (docs/SECURITY.md);
/// - **a flood that lasts** (the open share ran out in the last second too) leaves senders that
///   showed nothing only ``Limits/openUnderFloodPerSecond`` checks a second: each check of a forged
///   signature costs tens of microseconds, and on a busy machine the open share alone took all the
///   CPU the node was given, so it read its socket too slowly and the kernel dropped the new
///   guest's datagrams with the flood's. Cookies cost a hash; the challenge does the rest.
///
/// Every table is bounded (``maxAddresses``; when full it starts again; the per-second counts are
/// no larger than the limits).
public struct SenderGate: Sendable {
    public static let maxAddresses = 4096

    public struct Limits: Sendable, Equatable {
        public var perAddressRate: Int
        public var perAddressBurst: Int
        public var verificationsPerSecond: Int
        /// Of ``verificationsPerSecond``, what is kept for senders that showed an admission cookie.
        public var reservedPerSecond: Int
        /// The reserve one address may use in a second.
        public var reservedPerAddress: Int
        public var challengesPerSecond: Int
        public var challengesPerAddress: Int
        /// What senders that showed nothing may have verified in a second while a flood lasts (the
        /// open share ran out in the second before): the rest are challenged.
        public var openUnderFloodPerSecond: Int

        /// A listener sends a heartbeat a second and a few time pings; a guest's commands retry
        /// five times a second: 200 a second per address leaves room for a whole household. A new
        /// guest needs one datagram verified to be known (then its address and key pass over
        /// budget); 8 of the reserve per address takes 125 addresses with cookies to use it up.
        /// Under a flood that lasts, 100 open checks a second cost a few milliseconds of CPU a second.
        public init(
            perAddressRate: Int = 200, perAddressBurst: Int = 400, verificationsPerSecond: Int = 4000,
            reservedPerSecond: Int? = nil, reservedPerAddress: Int = 8, challengesPerSecond: Int = 2000,
            challengesPerAddress: Int = 8, openUnderFloodPerSecond: Int = 100
        ) {
            self.perAddressRate = max(1, perAddressRate)
            self.perAddressBurst = max(1, perAddressBurst)
            self.verificationsPerSecond = max(2, verificationsPerSecond)
            self.reservedPerSecond = min(
                max(1, reservedPerSecond ?? verificationsPerSecond / 4), self.verificationsPerSecond - 1)
            self.reservedPerAddress = max(1, reservedPerAddress)
            self.challengesPerSecond = max(0, challengesPerSecond)
            self.challengesPerAddress = max(0, challengesPerAddress)
            self.openUnderFloodPerSecond = max(0, openUnderFloodPerSecond)
        }

        /// What senders that showed nothing may have verified in a second.
        public var openPerSecond: Int { verificationsPerSecond - reservedPerSecond }
    }

    public enum Verdict: Equatable, Sendable {
        case verify
        case rateLimited
        case overBudget
        /// Not verified: answer with this admission cookie (the sender's at its address).
        case challenge(UInt64)
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var at: LocalTime
    }

    public let limits: Limits
    private let cookies: AddressCookies
    private var buckets: [String: Bucket] = [:]
    /// Where each known sender was last accepted from.
    private var knownFrom: [PublicKey: String] = [:]
    private var windowStart = LocalTime(ns: .min / 2)
    private var verifiedInWindow = 0
    /// Of ``verifiedInWindow``, how many came from the reserve, in all and per address.
    private var reservedInWindow = 0
    private var reservedByHost: [String: Int] = [:]
    private var challengesInWindow = 0
    private var challengesByHost: [String: Int] = [:]
    /// Senders that showed nothing, verified in this second (``Limits/openUnderFloodPerSecond``).
    private var openInWindow = 0
    /// Whether the open share ran out in this second, and in the one before it (a flood lasts).
    private var openRanOut = false
    public private(set) var floodLasts = false

    /// - Parameter cookieSecret: the admission cookies' key, random for each run unless a test sets it.
    public init(limits: Limits = Limits(), cookieSecret: (UInt64, UInt64)? = nil) {
        self.limits = limits
        cookies = AddressCookies(secret: cookieSecret)
    }

    /// The admission cookie of `sender` at `address` now: what a challenge to it carries.
    public func cookie(for sender: PublicKey, at address: PeerAddress, now: LocalTime) -> UInt64 {
        cookies.cookie(for: sender, at: address, now: now)
    }

    /// Whether a datagram from `sender` at `address`, showing `cookie`, may be verified at `now`;
    /// spends its share if so.
    public mutating func admit(
        sender: PublicKey, from address: PeerAddress, cookie: UInt64? = nil, now: LocalTime
    ) -> Verdict {
        let host = address.host
        var bucket = buckets[host] ?? Bucket(tokens: Double(limits.perAddressBurst), at: now)
        let elapsed = Double(max(0, now - bucket.at)) / 1e9
        bucket.tokens = min(Double(limits.perAddressBurst), bucket.tokens + elapsed * Double(limits.perAddressRate))
        bucket.at = now
        defer { remember(host, bucket) }
        guard bucket.tokens >= 1 else { return .rateLimited }
        if now - windowStart >= Nanos.seconds(1) {
            // A flood lasts when the open share ran out in the second just over (not in one long ago).
            floodLasts = openRanOut && now - windowStart < Nanos.seconds(2)
            openRanOut = false
            openInWindow = 0
            windowStart = now
            verifiedInWindow = 0
            reservedInWindow = 0
            reservedByHost.removeAll(keepingCapacity: true)
            challengesInWindow = 0
            challengesByHost.removeAll(keepingCapacity: true)
        }
        let known = knownFrom[sender] == host
        var fromReserve = false
        if !known
            && (verifiedInWindow - reservedInWindow >= limits.openPerSecond
                || floodLasts && openInWindow >= limits.openUnderFloodPerSecond)
        {
            // The open share is spent: a sender that reads at its address can show it.
            openRanOut = true
            if let cookie, cookies.isValid(cookie, for: sender, at: address, now: now) {
                let used = reservedByHost[host, default: 0]
                guard reservedInWindow < limits.reservedPerSecond, used < limits.reservedPerAddress else {
                    return .overBudget
                }
                reservedInWindow += 1
                reservedByHost[host] = used + 1
                fromReserve = true
            } else {
                let sent = challengesByHost[host, default: 0]
                guard challengesInWindow < limits.challengesPerSecond, sent < limits.challengesPerAddress else {
                    return .overBudget
                }
                challengesInWindow += 1
                challengesByHost[host] = sent + 1
                return .challenge(cookies.cookie(for: sender, at: address, now: now))
            }
        }
        bucket.tokens -= 1
        verifiedInWindow += 1
        if !known && !fromReserve { openInWindow += 1 }
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
