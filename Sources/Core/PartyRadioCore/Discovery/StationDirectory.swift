/// An observer's list of stations: DNS-SD tells which exist, datagrams tell which are alive.
///
/// A station is *listed* only once it has been heard (a snapshot arrived), and is dropped
/// when DNS-SD removes it, when it says goodbye, or after ``silenceTimeoutNs`` without a
/// datagram — Avahi keeps a vanished host's records for minutes, heartbeats do not.
public struct StationDirectory: Sendable {
    public struct Entry: Sendable, Equatable {
        public var serviceName: String
        public var advert: StationAdvert
        public var address: String
        public var port: UInt16
        public var snapshot: StateSnapshot?
        public var lastHeard: LocalTime?
        /// The station's last listener list.
        public var roster: Roster?

        public var isListed: Bool { snapshot != nil }
    }

    public enum Change: Equatable, Sendable {
        case appeared(StationID)
        case updated(StationID)
        case vanished(StationID, name: String, reason: String)
    }

    public let silenceTimeoutNs: Int64
    public private(set) var entries: [StationID: Entry] = [:]

    public init(silenceTimeoutNs: Int64 = Nanos.seconds(2.5)) { self.silenceTimeoutNs = silenceTimeoutNs }

    /// Stations heard from, sorted by name.
    public var listed: [Entry] {
        entries.values.filter(\.isListed).sorted {
            ($0.snapshot?.stationName ?? $0.serviceName, $0.advert.stationID.hex)
                < ($1.snapshot?.stationName ?? $1.serviceName, $1.advert.stationID.hex)
        }
    }

    /// DNS-SD resolved a service. Returns the station whose address changed, if any.
    public mutating func resolved(serviceName: String, advert: StationAdvert, address: String, port: UInt16) {
        let id = advert.stationID
        if var entry = entries[id] {
            // Another key claiming a known station's ID is an impostor: the key pinned first stays,
            // and so do the address and name that came with it.
            guard entry.advert.publicKey == advert.publicKey else { return }
            entry.serviceName = serviceName
            entry.address = address
            entry.port = port
            entry.advert = advert
            entries[id] = entry
        } else {
            entries[id] = Entry(
                serviceName: serviceName, advert: advert, address: address, port: port, snapshot: nil, lastHeard: nil)
        }
    }

    /// DNS-SD removed a service instance.
    public mutating func removed(serviceName: String) -> [Change] {
        let gone = entries.values.filter { $0.serviceName == serviceName }
        return gone.compactMap { entry in remove(entry.advert.stationID, reason: "withdrawn") }
    }

    /// A verified snapshot arrived from a station.
    public mutating func heard(_ id: StationID, snapshot: StateSnapshot, now: LocalTime) -> Change? {
        guard var entry = entries[id] else { return nil }
        let wasListed = entry.isListed
        // sentAtNs differs in every snapshot; only what a user sees counts as a change.
        var previous = entry.snapshot
        previous?.sentAtNs = snapshot.sentAtNs
        let changed = previous != snapshot
        entry.snapshot = snapshot
        entry.lastHeard = now
        entries[id] = entry
        if !wasListed { return .appeared(id) }
        return changed ? .updated(id) : nil
    }

    /// A verified listener list arrived from a station.
    public mutating func heard(_ id: StationID, roster: Roster) -> Change? {
        guard var entry = entries[id], entry.roster != roster else { return nil }
        entry.roster = roster
        entries[id] = entry
        return entry.isListed ? .updated(id) : nil
    }

    public mutating func goodbye(_ id: StationID) -> Change? { remove(id, reason: "went off air") }

    /// Drops listed stations not heard for ``silenceTimeoutNs`` (they stay known, unlisted,
    /// until DNS-SD removes them, so they reappear as soon as they are heard again).
    public mutating func expire(now: LocalTime) -> [Change] {
        var changes: [Change] = []
        for (id, entry) in entries {
            guard let heard = entry.lastHeard, entry.isListed, now - heard > silenceTimeoutNs else { continue }
            entries[id]?.snapshot = nil
            changes.append(.vanished(id, name: entry.snapshot?.stationName ?? entry.serviceName, reason: "went silent"))
        }
        return changes
    }

    private mutating func remove(_ id: StationID, reason: String) -> Change? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        guard entry.isListed else { return nil }
        return .vanished(id, name: entry.snapshot?.stationName ?? entry.serviceName, reason: reason)
    }
}
