/// The listeners that cannot hear the station's multicast group (they found the DJ in a unicast
/// DNS-SD domain, on another subnet): the DJ sends each of them by unicast what it sends the group.
///
/// A listener is added by a hello or heartbeat that asks for it, kept by its heartbeats, and
/// forgotten on leave or after ``timeoutNs`` without one (as the roster forgets it). The book is
/// bounded: past ``capacity`` the listener heard least recently makes room, so a flood of keys
/// cannot make the DJ send more than `capacity` copies of anything.
public struct UnicastListeners: Sendable, Equatable {
    public static let capacity = 64

    public let timeoutNs: Int64
    public private(set) var entries: [PublicKey: Entry] = [:]

    public struct Entry: Sendable, Equatable {
        public var address: PeerAddress
        public var lastHeard: LocalTime
    }

    public init(timeoutNs: Int64 = Nanos.seconds(3.5)) { self.timeoutNs = timeoutNs }

    /// The addresses to copy the group's messages to, in a stable order.
    public var addresses: [PeerAddress] {
        Set(entries.values.map(\.address)).sorted { $0.description < $1.description }
    }

    /// A hello or heartbeat from `key` at `address`: kept if it asks for unicast, dropped if it no
    /// longer does (a listener that moved onto the group's link).
    public mutating func heard(_ key: PublicKey, at address: PeerAddress, wantsUnicast: Bool, now: LocalTime) {
        guard wantsUnicast else {
            entries[key] = nil
            return
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
