/// The listeners a DJ knows: joined by hello, kept by heartbeats, dropped by leave or silence.
public struct ListenerRoster: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var lastSeen: DJTime
        /// When this listener joined (its first hello or heartbeat).
        public var joined: DJTime
    }

    /// A listener silent for this long is dropped (three missed one-second heartbeats).
    public let timeoutNs: Int64
    public private(set) var entries: [PublicKey: Entry] = [:]
    /// The names listeners gave, kept after they are dropped so that one heard again by heartbeat
    /// alone keeps its name; at most ``rememberedNames``.
    private var names: [PublicKey: String] = [:]
    static let rememberedNames = 4096

    public init(timeoutNs: Int64 = Nanos.seconds(3.5)) { self.timeoutNs = timeoutNs }

    public var count: Int { entries.count }

    /// A hello: returns true when the listener is new.
    @discardableResult
    public mutating func join(_ key: PublicKey, name: String, now: DJTime) -> Bool {
        let isNew = entries[key] == nil
        entries[key] = Entry(name: name, lastSeen: now, joined: entries[key]?.joined ?? now)
        if names.count >= Self.rememberedNames { names.removeAll() }  // bounded: a name is a nicety
        names[key] = name
        return isNew
    }

    /// A heartbeat from a listener the DJ does not know (it restarted, the hello was lost, or
    /// the listener was dropped after a silence) counts as a join too, under the name it last
    /// gave, else its key's fingerprint. Returns true when the listener is new.
    @discardableResult
    public mutating func heartbeat(_ key: PublicKey, now: DJTime) -> Bool {
        if entries[key] != nil {
            entries[key]?.lastSeen = now
            return false
        }
        return join(key, name: names[key] ?? key.fingerprint, now: now)
    }

    /// The name `key` gave in its hello, listening now or before (nil: none known; a listener
    /// heard by heartbeat alone is listed under its fingerprint, which is no name).
    public func name(of key: PublicKey) -> String? {
        guard let name = entries[key]?.name ?? names[key], name != key.fingerprint else { return nil }
        return name
    }

    /// Returns true when the listener was known.
    @discardableResult
    public mutating func leave(_ key: PublicKey) -> Bool { entries.removeValue(forKey: key) != nil }

    /// Drops every listener silent for longer than ``timeoutNs``; returns how many went.
    /// The listener list as the wire carries it, the longest-listening first: only the first
    /// ``Roster/Limit/maxEntries`` fit, so those are picked in one pass rather than by sorting
    /// every listener (the DJ lists them whenever the listeners change; at a party of thousands,
    /// sorting them all was most of the cost of a vote from a new guest).
    public func list(now: DJTime) -> Roster {
        func before(_ a: Entry, _ b: Entry) -> Bool { (a.joined, a.name) < (b.joined, b.name) }
        var first: [Entry] = []
        first.reserveCapacity(Roster.Limit.maxEntries + 1)
        for entry in entries.values {
            if first.count == Roster.Limit.maxEntries, let last = first.last, !before(entry, last) { continue }
            let place = first.firstIndex { before(entry, $0) } ?? first.count
            first.insert(entry, at: place)
            if first.count > Roster.Limit.maxEntries { first.removeLast() }
        }
        return Roster(
            total: UInt32(entries.count),
            entries: first.map { entry in
                Roster.Entry(name: entry.name, listeningForMs: UInt32(clamping: max(0, now - entry.joined) / 1_000_000))
            })
    }

    public mutating func expire(now: DJTime) -> Int {
        let before = entries.count
        entries = entries.filter { now - $0.value.lastSeen <= timeoutNs }
        return before - entries.count
    }
}
