/// The listeners a DJ knows: joined by hello, kept by heartbeats, dropped by leave or silence.
///
/// Each listener is a key, and is listed as one; but keys cost nothing, so what scales a rule (crowd
/// skip's room) counts machines: ``room(votersPerMachine:)`` (docs/SECURITY.md, "One machine, many
/// addresses").
public struct ListenerRoster: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var lastSeen: DJTime
        /// When this listener joined (its first hello or heartbeat).
        public var joined: DJTime
        /// The listener's machine (``MachineID/key``), as last heard; nil while its link-layer
        /// address is not known (such a listener is listed, but not in the room until it is).
        public var machine: String?
    }

    /// A listener silent for this long is dropped (three missed one-second heartbeats).
    public let timeoutNs: Int64
    public private(set) var entries: [PublicKey: Entry] = [:]
    /// The names listeners gave, kept after they are dropped so that one heard again by heartbeat
    /// alone keeps its name; at most ``rememberedNames``.
    private var names: [PublicKey: String] = [:]
    static let rememberedNames = 4096
    /// How many listeners each known machine has (machines with none are not kept).
    private var perMachine: [String: Int] = [:]

    public init(timeoutNs: Int64 = Nanos.seconds(3.5)) { self.timeoutNs = timeoutNs }

    /// The listeners (keys), as listed and shown.
    public var count: Int { entries.count }

    /// The listeners as crowd skip counts its room: one per machine, or up to `votersPerMachine`
    /// (`--voters-per-address`, as many as the machine's votes that count); listeners whose machine
    /// is not known yet are left out. One machine's fresh keys (hellos from many processes, a page
    /// posting without its cookie) are then one listener, as their votes are one vote.
    public func room(votersPerMachine: Int) -> Int {
        if votersPerMachine <= 1 { return perMachine.count }
        return perMachine.values.reduce(0) { $0 + min($1, votersPerMachine) }
    }

    /// A hello: returns true when the listener is new.
    @discardableResult
    public mutating func join(_ key: PublicKey, name: String, machine: String? = nil, now: DJTime) -> Bool {
        let old = entries[key]
        // A machine not known this time keeps what was known (a neighbour entry may lapse meanwhile).
        let machine = machine ?? old?.machine
        entries[key] = Entry(name: name, lastSeen: now, joined: old?.joined ?? now, machine: machine)
        moved(from: old?.machine, to: machine, known: old != nil)
        if names.count >= Self.rememberedNames { names.removeAll() }  // bounded: a name is a nicety
        names[key] = name
        return old == nil
    }

    /// Keeps ``perMachine`` in step as a listener comes (`known` false), stays or moves.
    private mutating func moved(from old: String?, to new: String?, known: Bool) {
        if known, old == new { return }
        if known, let old { forget(old) }
        if let new { perMachine[new, default: 0] += 1 }
    }

    private mutating func forget(_ machine: String) {
        let left = (perMachine[machine] ?? 1) - 1
        perMachine[machine] = left > 0 ? left : nil
    }

    /// A heartbeat from a listener the DJ does not know (it restarted, the hello was lost, or
    /// the listener was dropped after a silence) counts as a join too, under the name it last
    /// gave, else its key's fingerprint. Returns true when the listener is new.
    @discardableResult
    public mutating func heartbeat(_ key: PublicKey, machine: String? = nil, now: DJTime) -> Bool {
        if let old = entries[key] {
            entries[key]?.lastSeen = now
            // A machine learnt since the hello (or, rarely, another one) replaces what was known.
            if let machine, machine != old.machine {
                entries[key]?.machine = machine
                moved(from: old.machine, to: machine, known: true)
            }
            return false
        }
        return join(key, name: names[key] ?? key.fingerprint, machine: machine, now: now)
    }

    /// The name `key` gave in its hello, listening now or before (nil: none known; a listener
    /// heard by heartbeat alone is listed under its fingerprint, which is no name).
    public func name(of key: PublicKey) -> String? {
        guard let name = entries[key]?.name ?? names[key], name != key.fingerprint else { return nil }
        return name
    }

    /// Returns true when the listener was known.
    @discardableResult
    public mutating func leave(_ key: PublicKey) -> Bool {
        guard let old = entries.removeValue(forKey: key) else { return false }
        if let machine = old.machine { forget(machine) }
        return true
    }

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

    /// Drops every listener silent for longer than ``timeoutNs``; returns how many went.
    public mutating func expire(now: DJTime) -> Int {
        let before = entries.count
        for (_, entry) in entries where now - entry.lastSeen > timeoutNs {
            if let machine = entry.machine { forget(machine) }
        }
        entries = entries.filter { now - $0.value.lastSeen <= timeoutNs }
        return before - entries.count
    }
}
