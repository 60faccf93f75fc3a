/// The listeners a DJ knows: joined by hello, kept by heartbeats, dropped by leave or silence.
public struct ListenerRoster: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var lastSeen: DJTime
    }

    /// A listener silent for this long is dropped (three missed one-second heartbeats).
    public let timeoutNs: Int64
    public private(set) var entries: [PublicKey: Entry] = [:]

    public init(timeoutNs: Int64 = Nanos.seconds(3.5)) { self.timeoutNs = timeoutNs }

    public var count: Int { entries.count }

    /// A hello: returns true when the listener is new.
    @discardableResult
    public mutating func join(_ key: PublicKey, name: String, now: DJTime) -> Bool {
        let isNew = entries[key] == nil
        entries[key] = Entry(name: name, lastSeen: now)
        return isNew
    }

    /// A heartbeat from a listener the DJ does not know (it restarted, or the hello was lost)
    /// counts as a join too. Returns true when the listener is new.
    @discardableResult
    public mutating func heartbeat(_ key: PublicKey, now: DJTime) -> Bool {
        if entries[key] != nil {
            entries[key]?.lastSeen = now
            return false
        }
        return join(key, name: "", now: now)
    }

    /// Returns true when the listener was known.
    @discardableResult
    public mutating func leave(_ key: PublicKey) -> Bool { entries.removeValue(forKey: key) != nil }

    /// Drops every listener silent for longer than ``timeoutNs``; returns how many went.
    public mutating func expire(now: DJTime) -> Int {
        let before = entries.count
        entries = entries.filter { now - $0.value.lastSeen <= timeoutNs }
        return before - entries.count
    }
}
