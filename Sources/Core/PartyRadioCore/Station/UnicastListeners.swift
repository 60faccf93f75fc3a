/// The listeners that cannot hear the station's multicast group (they found the DJ in a unicast
/// DNS-SD domain, on another subnet): the DJ sends each of them by unicast what it sends the group.
///
/// A listener is added by a hello or heartbeat that asks for it, kept by its heartbeats, and
/// forgotten on leave or after ``timeoutNs`` without one (as the roster forgets it). The book is
/// bounded: past ``capacity`` the listener heard least recently makes room, so a flood of keys
/// cannot make the DJ send more than `capacity` copies of anything.
///
/// A source address can be forged, so a listener is added only at an address it has shown it reads
/// from: its hello or heartbeat carries the *return cookie* of that address, which the DJ sends in
/// every time pong (``cookie(for:at:now:)``: SipHash-2-4 under a secret of the DJ's run, over the
/// key, the address and a 30 s epoch; the current epoch's and the last one's are taken). Once added, a listener
/// is kept by what it sends from the same address, cookie or not; a move to another address needs
/// that address's cookie.
public struct UnicastListeners: Sendable, Equatable {
    public static let capacity = 64
    /// How long a cookie's epoch lasts; a cookie is taken in its own epoch and the next.
    public static let cookieEpochNs = AddressCookies.epochNs

    public let timeoutNs: Int64
    public private(set) var entries: [PublicKey: Entry] = [:]
    /// Requests for copies refused for want of the address's cookie (for `-v` and the tests).
    public private(set) var refused = 0
    private let cookies: AddressCookies

    public struct Entry: Sendable, Equatable {
        public var address: PeerAddress
        public var lastHeard: LocalTime
    }

    /// - Parameter secret: the cookies' key, random for each run of the DJ unless a test sets it.
    public init(timeoutNs: Int64 = Nanos.seconds(3.5), secret: (UInt64, UInt64)? = nil) {
        self.timeoutNs = timeoutNs
        cookies = AddressCookies(secret: secret)
    }

    /// The return cookie of `key` at `address` now: what the DJ's time pongs to it carry.
    public func cookie(for key: PublicKey, at address: PeerAddress, now: LocalTime) -> UInt64 {
        cookies.cookie(for: key, at: address, now: now)
    }

    /// Whether `cookie` is `key`'s at `address`, of this epoch or the last.
    public func isValid(_ cookie: UInt64, for key: PublicKey, at address: PeerAddress, now: LocalTime) -> Bool {
        cookies.isValid(cookie, for: key, at: address, now: now)
    }

    /// The addresses to copy the group's messages to, in a stable order.
    public var addresses: [PeerAddress] {
        Set(entries.values.map(\.address)).sorted { $0.description < $1.description }
    }

    /// A hello or heartbeat from `key` at `address`: kept if it asks for unicast (and, unless the
    /// listener is already here at that address, carries the address's cookie), dropped if it no
    /// longer asks (a listener that moved onto the group's link).
    public mutating func heard(
        _ key: PublicKey, at address: PeerAddress, wantsUnicast: Bool, cookie: UInt64?, now: LocalTime
    ) {
        guard wantsUnicast else {
            entries[key] = nil
            return
        }
        if entries[key]?.address != address {
            guard let cookie, isValid(cookie, for: key, at: address, now: now) else {
                refused += 1
                return
            }
        }
        if entries[key] == nil, entries.count >= Self.capacity,
            let oldest = entries.min(by: { $0.value.lastHeard < $1.value.lastHeard })?.key
        {
            entries[oldest] = nil
        }
        entries[key] = Entry(address: address, lastHeard: now)
    }

    public mutating func leave(_ key: PublicKey) { entries[key] = nil }

    /// Forgets listeners silent for longer than ``timeoutNs``.
    public mutating func expire(now: LocalTime) {
        entries = entries.filter { now - $0.value.lastHeard <= timeoutNs }
    }
}
