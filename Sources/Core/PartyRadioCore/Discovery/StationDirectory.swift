/// An observer's list of stations: DNS-SD tells which exist, datagrams tell which are alive.
///
/// A station is *listed* only once it has been heard (a snapshot arrived), and is dropped
/// when DNS-SD removes it, when it says goodbye, or after ``silenceTimeoutNs`` without a
/// datagram — Avahi keeps a vanished host's records for minutes, heartbeats do not.
///
/// **Routes.** Anyone on the LAN can announce a service whose TXT record is a copy of a station's
/// (its ID and key are public), pointing at their own address. So a station is followed at one
/// address, and every service that announces it is a *route* to it: the first one found is
/// followed; another is a candidate. The station moves to a candidate's address only once that
/// address has answered a time ping of this node with a pong signed by the station's key
/// (``proven(_:at:pingedAt:echo:now:)``, which the watch checks), and only when the address
/// followed no longer serves: no route gives it any more, it never answered or went silent, or
/// the candidate's family is the better one (IPv4 before IPv6 before link-local IPv6). While two
/// addresses announce a station, it is listed only once the one followed has shown it is the
/// station's. Withdrawing one service drops the station only when it was the last route.
public struct StationDirectory: Sendable {
    /// One DNS-SD service announcing a station: where it says the station is, and its advert.
    public struct Route: Sendable, Equatable {
        public var address: PeerAddress
        public var advert: StationAdvert

        public init(address: PeerAddress, advert: StationAdvert) {
            self.address = address
            self.advert = advert
        }
    }

    public struct Entry: Sendable, Equatable {
        /// The service name of the route the station is followed on.
        public var serviceName: String
        /// The advert of the route followed.
        public var advert: StationAdvert
        /// Where the station is followed.
        public var address: String
        public var port: UInt16
        public var snapshot: StateSnapshot?
        public var lastHeard: LocalTime?
        /// The station's last listener list.
        public var roster: Roster?
        /// Every service announcing the station, by service name.
        public var routes: [String: Route] = [:]
        /// When a verified datagram of the station last came from the address followed.
        public var heardAtAddress: LocalTime?
        /// The address followed has shown it is the station's: it was heard while no other address
        /// announced the station, or it answered a ping with a signed pong.
        public var isTrusted = false
        /// Addresses that answered a ping of this node with a pong signed by the station's key:
        /// the latest echo taken from each (a pong is taken once).
        public var proofs: [PeerAddress: Int64] = [:]

        public var followed: PeerAddress { PeerAddress(host: address, port: port) }

        /// The distinct addresses the station's routes give.
        public var routeAddresses: Set<PeerAddress> { Set(routes.values.map(\.address)) }

        /// More than the address followed announces the station: which one is real takes an answer.
        public var isContested: Bool { routeAddresses.subtracting([followed]).count > 0 && routes.count > 1 }

        public var isListed: Bool { snapshot != nil && (!isContested || isTrusted) }

        /// The addresses this node asks for a signed answer: every route's address but the one
        /// followed, and that one too while it is contested and has not shown it is the station's.
        public var candidates: [PeerAddress] {
            var addresses = routeAddresses
            if !isContested || isTrusted { addresses.remove(followed) }
            return addresses.sorted { ($0.host, $0.port) < ($1.host, $1.port) }
        }
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

    /// How a host's family ranks as an address to follow and give out: IPv4 (0) before IPv6 that
    /// needs no zone (1) before link-local IPv6 (2), which a browser cannot open.
    public static func rank(_ host: String) -> Int {
        guard host.contains(":") else { return 0 }
        let lower = host.lowercased()
        let linkLocal = lower.contains("%") || ["fe8", "fe9", "fea", "feb"].contains { lower.hasPrefix($0) }
        return linkLocal ? 2 : 1
    }

    /// DNS-SD resolved a service: a new station, a route to a known one, or a known route's new
    /// address or advert. A route's new address is followed at once only while nothing was heard
    /// at the address followed; otherwise it is a candidate like any other route.
    @discardableResult
    public mutating func resolved(serviceName: String, advert: StationAdvert, address: String, port: UInt16) -> Change?
    {
        let id = advert.stationID
        let route = Route(address: PeerAddress(host: address, port: port), advert: advert)
        guard var entry = entries[id] else {
            entries[id] = Entry(
                serviceName: serviceName, advert: advert, address: address, port: port, snapshot: nil, lastHeard: nil,
                routes: [serviceName: route])
            return nil
        }
        // Another key claiming a known station's ID is an impostor: the key pinned first stays,
        // and so do the address and name that came with it.
        guard entry.advert.publicKey == advert.publicKey else { return nil }
        let wasListed = entry.isListed
        entry.routes[serviceName] = route
        if serviceName == entry.serviceName {
            if route.address == entry.followed {
                entry.advert = advert  // the same service with a new TXT record
            } else if entry.heardAtAddress == nil {
                // Nothing answered at the old address: the service moved before it was heard.
                entry.address = address
                entry.port = port
                entry.advert = advert
                entry.isTrusted = false
            }
        }
        entries[id] = entry
        return Self.change(id, entry, wasListed: wasListed, reason: "announced at another address too")
    }

    /// DNS-SD removed a service instance: the stations it was the last route to are gone.
    public mutating func removed(serviceName: String) -> [Change] {
        var changes: [Change] = []
        for (id, var entry) in entries where entry.routes[serviceName] != nil {
            entry.routes[serviceName] = nil
            if entry.routes.isEmpty {
                if let change = remove(id, reason: "withdrawn") { changes.append(change) }
                continue
            }
            let wasListed = entry.isListed
            if entry.serviceName == serviceName,
                let other = entry.routes.filter({ $0.value.address == entry.followed }).keys.min()
            {
                entry.serviceName = other  // another service gives the same address
            }
            entries[id] = entry
            if let change = Self.change(id, entry, wasListed: wasListed, reason: "withdrawn") { changes.append(change) }
        }
        return changes
    }

    /// A verified datagram of station `id` came from `address`: the address followed is alive, and
    /// trusted when no other address announces the station.
    public mutating func heard(_ id: StationID, from address: PeerAddress, now: LocalTime) -> Change? {
        guard var entry = entries[id], address == entry.followed else { return nil }
        let wasListed = entry.isListed
        entry.heardAtAddress = now
        if !entry.isContested { entry.isTrusted = true }
        entries[id] = entry
        return Self.change(id, entry, wasListed: wasListed, reason: "")
    }

    /// `address` answered this node's time ping (sent at `pingedAt`) with a pong signed by station
    /// `id`'s key, echoing `echo` (the ping's send time, stamped as it went out). Taken only when
    /// the echo falls between the ping and now and is newer than the last taken from that address,
    /// so that a pong replayed from elsewhere proves nothing. The station moves there when the
    /// address followed no longer serves (see the type's notes). Returns the listing's change.
    public mutating func proven(
        _ id: StationID, at address: PeerAddress, pingedAt: LocalTime, echo: Int64, now: LocalTime
    ) -> Change? {
        guard var entry = entries[id], entry.routeAddresses.contains(address) else { return nil }
        guard echo >= pingedAt.ns, echo <= now.ns, echo > entry.proofs[address] ?? .min else { return nil }
        let wasListed = entry.isListed
        entry.proofs[address] = echo
        if address == entry.followed {
            entry.isTrusted = true
            entry.heardAtAddress = now
        } else if Self.shouldMove(entry, to: address, now: now, silenceNs: silenceTimeoutNs),
            let route = entry.routes.filter({ $0.value.address == address }).min(by: { $0.key < $1.key })
        {
            entry.serviceName = route.key
            entry.advert = route.value.advert
            entry.address = address.host
            entry.port = address.port
            entry.isTrusted = true
            entry.heardAtAddress = now
        }
        entries[id] = entry
        return Self.change(id, entry, wasListed: wasListed, reason: "")
    }

    /// Whether a station followed at `entry.followed` moves to `address`, which has just answered:
    /// only when the address followed no longer serves, or `address` is of a better family.
    static func shouldMove(_ entry: Entry, to address: PeerAddress, now: LocalTime, silenceNs: Int64) -> Bool {
        if !entry.routeAddresses.contains(entry.followed) { return true }  // no service gives it any more
        if !entry.isTrusted { return true }  // it never showed it is the station's
        guard let heard = entry.heardAtAddress, now - heard <= silenceNs else { return true }  // silent
        return rank(address.host) < rank(entry.followed.host)
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
        guard entry.isListed else { return nil }
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
            guard let heard = entry.lastHeard, entry.snapshot != nil, now - heard > silenceTimeoutNs else { continue }
            entries[id]?.snapshot = nil
            guard entry.isListed else { continue }
            changes.append(.vanished(id, name: entry.snapshot?.stationName ?? entry.serviceName, reason: "went silent"))
        }
        return changes
    }

    private mutating func remove(_ id: StationID, reason: String) -> Change? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        guard entry.isListed else { return nil }
        return .vanished(id, name: entry.snapshot?.stationName ?? entry.serviceName, reason: reason)
    }

    /// What a step did to the listing of `entry`: it appeared, or vanished for `reason`.
    private static func change(_ id: StationID, _ entry: Entry, wasListed: Bool, reason: String) -> Change? {
        switch (wasListed, entry.isListed) {
        case (false, true): .appeared(id)
        case (true, false): .vanished(id, name: entry.snapshot?.stationName ?? entry.serviceName, reason: reason)
        default: nil
        }
    }
}
