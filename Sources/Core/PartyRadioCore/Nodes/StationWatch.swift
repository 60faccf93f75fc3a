/// Finds stations and keeps them honest, as a pure component of the observer, listener and
/// voter machines: DNS-SD says which stations exist; each resolved station is queried over
/// unicast every ``queryIntervalNs`` and listed only once it answers; it is dropped when it is
/// withdrawn, says goodbye or falls silent. Every other address a station is announced at (a
/// second service with its ID and key, or its service's new address) is sent a time ping as
/// often, and the station moves there only when a pong signed by its key comes back from there
/// (``StationDirectory``, "Routes").
public struct StationWatch: Sendable {
    public static let queryIntervalNs = Nanos.ms(500)

    public private(set) var directory = StationDirectory()
    /// True once DNS-SD finished its first sweep and every station found then answered or had
    /// three query rounds to.
    public private(set) var settled = false
    /// Off once a listener has tuned in: it hears the station on the group, and needs the watch
    /// only for DNS-SD (a new address, a withdrawal).
    public var isQuerying = true
    private var lastQuery: [StationID: LocalTime] = [:]
    /// When each candidate address of a station was last pinged (``StationDirectory/Entry/candidates``).
    private var lastPing: [StationID: [PeerAddress: LocalTime]] = [:]
    private var firstQuery: [StationID: LocalTime] = [:]
    private var pendingResolutions: Set<String> = []
    private var sweepDone = false
    private var lastTickAt = LocalTime(ns: .min / 2)
    /// Derives a station's ID from its key, to check adverts.
    private let verifier: (any DatagramVerifier)?
    /// Adverts refused (an ID that is not its key's, a TXT record that is no advert, a private one
    /// the code does not open) and records of a DNS domain left out (``DomainDrop``), by reason.
    public private(set) var drops = DropCounters()
    /// Private stations this node cannot open, by service name: it has no code, or not theirs.
    public private(set) var lockedStations: [String: Lock] = [:]

    /// Why a private station stays closed to this node.
    public enum Lock: Sendable, Equatable {
        /// No `--code` was given.
        case noCode
        /// The code given does not open its TXT record.
        case wrongCode
    }

    public init(verifier: (any DatagramVerifier)? = nil) { self.verifier = verifier }

    /// The stations' pinned keys, for the datagram filter, and the private ones (sealed only).
    public var policy: SenderPolicy {
        .stations(
            Dictionary(directory.entries.map { ($0.key, $0.value.advert.publicKey) }, uniquingKeysWith: { a, _ in a }),
            sealed: Set(directory.entries.filter { $0.value.advert.isPrivate }.map(\.key)))
    }

    /// Listed stations, with their positions at `now`. An observer has no estimate of the DJ
    /// clock, and a listing needs none: the DJ time now is taken as the last snapshot's send time
    /// plus the local time since it arrived (off by the one-way delay, not by the clock offset).
    public func summaries(now: LocalTime) -> [StationSummary] {
        directory.listed.compactMap { entry in
            guard let snapshot = entry.snapshot else { return nil }
            var summary = StationSummary(
                id: entry.advert.stationID, serviceName: entry.serviceName, address: entry.address, port: entry.port,
                advert: entry.advert, snapshot: snapshot,
                positionNs: snapshot.position(at: snapshot.sentAt + (entry.lastHeard.map { now - $0 } ?? 0)))
            summary.listeners = entry.roster?.entries ?? []
            return summary
        }
    }

    public mutating func handle(_ event: DiscoveryEvent, into out: inout [Effect]) -> [StationDirectory.Change] {
        switch event {
        case .discovered(let name):
            pendingResolutions.insert(name)
            out.append(.log(.discovery, "found service '\(name)'"))
        case .unresolved(let name):
            pendingResolutions.remove(name)
            out.append(.log(.discovery, "could not resolve '\(name)'"))
        case .resolved(let name, let address, let port, let txt):
            pendingResolutions.remove(name)
            var record = txt
            if let blob = StationAdvert.sealedBlob(in: txt) {
                guard let seal = verifier?.seal else {
                    lockedStations[name] = .noCode
                    out.append(.log(.discovery, "'\(name)' is a private station, and no code was given"))
                    return []
                }
                guard let opened = seal.open(txt: blob) else {
                    lockedStations[name] = .wrongCode
                    drops.record(reason: "bad_seal_advert")
                    out.append(.log(.discovery, "'\(name)' is a private station that the code given does not open"))
                    return []
                }
                record = opened
            }
            var advert: StationAdvert
            do { advert = try StationAdvert(txtRecord: record) } catch {
                drops.record(reason: "bad_advert")
                out.append(.log(.discovery, "ignored '\(name)': bad TXT record (\(error))"))
                return []
            }
            lockedStations[name] = nil
            // The key is the station: an advert whose ID is not derived from its key is an impostor
            // (another station's ID with the attacker's key), refused before anything believes it.
            if let owned = verifier?.stationID(for: advert.publicKey), owned != advert.stationID {
                drops.record(reason: "impostor_advert")
                out.append(
                    .log(
                        .discovery,
                        "refused '\(name)' at \(PeerAddress(host: address, port: port)): it claims station \(advert.stationID.hex), but its key "
                            + "\(advert.publicKey.fingerprint) owns \(owned.hex)"))
                return []
            }
            if record != txt {
                // Opened under our code: what this node sends the station goes sealed.
                advert.isPrivate = true
                out.append(.sealFor(advert.stationID))
            }
            if advert.takesSessionVotes { out.append(.sessionFor(advert.stationID, stationKey: advert.publicKey)) }
            let id = advert.stationID
            let followed = directory.entries[id]?.followed
            let change = directory.resolved(serviceName: name, advert: advert, address: address, port: port)
            if directory.entries[id]?.followed != followed { lastQuery[id] = nil }  // query the new address at once
            let peer = PeerAddress(host: address, port: port)
            if let entry = directory.entries[id], entry.candidates.contains(peer) {
                lastPing[id]?[peer] = nil  // ask the new address at once
                out.append(
                    .log(
                        .discovery,
                        "resolved '\(name)' → \(peer), station \(id.hex), followed at \(entry.followed): a route to "
                            + "try (the station moves only when a pong signed by its key comes from there)"))
            } else {
                out.append(.log(.discovery, "resolved '\(name)' → \(peer), station \(id.hex)"))
            }
            return change.map { [$0] } ?? []
        case .removed(let name):
            pendingResolutions.remove(name)
            out.append(.log(.discovery, "service '\(name)' withdrawn"))
            lockedStations[name] = nil
            let changes = directory.removed(serviceName: name)
            for id in Set(lastQuery.keys).union(firstQuery.keys).union(lastPing.keys) where directory.entries[id] == nil
            {
                lastQuery[id] = nil
                firstQuery[id] = nil
                lastPing[id] = nil
            }
            return changes
        case .refused(let name, let reason):
            drops.record(reason: reason.counterName)
            let verdict = reason.leavesOut ? "leaving out '\(name)':" : "'\(name)' has"
            out.append(.log(.discovery, "DNS domain: \(verdict) \(reason.what) (\(reason.counterName))"))
        case .allForNow:
            sweepDone = true
            out.append(.log(.discovery, "first sweep done"))
        case .daemonLost:
            pendingResolutions.removeAll()
            out.append(.report(.discoveryDaemon(running: false)))
        case .daemonBack:
            out.append(.report(.discoveryDaemon(running: true)))
        case .failed, .published, .renamed:
            break
        }
        return []
    }

    /// A verified datagram from a station.
    public mutating func handle(_ inbound: Inbound, now: LocalTime) -> [StationDirectory.Change] {
        let id = inbound.stationID
        var changes: [StationDirectory.Change] = []
        if case .node(let address) = inbound.origin {
            let followed = directory.entries[id]?.followed
            if let change = directory.heard(id, from: address, now: now) { changes.append(change) }
            if case .timePong(let pong) = inbound.message, let pinged = lastPing[id]?[address],
                let change = directory.proven(id, at: address, pingedAt: pinged, echo: pong.clientSendNs, now: now)
            {
                changes.append(change)
            }
            if let moved = directory.entries[id]?.followed, moved != followed {
                lastQuery[id] = nil  // ask the new address at once
                lastPing[id]?[moved] = nil
            }
        }
        switch inbound.message {
        case .stateSnapshot(let snapshot):
            if let change = directory.heard(id, snapshot: snapshot, now: now) { changes.append(change) }
        case .roster(let roster):
            if let change = directory.heard(id, roster: roster) { changes.append(change) }
        case .goodbye:
            lastQuery[id] = nil
            firstQuery[id] = nil
            lastPing[id] = nil
            if let change = directory.goodbye(id) { changes.append(change) }
        default:
            break
        }
        return changes
    }

    /// Queries every station again at the next tick: one asked this node for its admission cookie,
    /// and the query that showed none was dropped.
    public mutating func queryAgainNow() { lastQuery.removeAll() }

    /// Expiry, queries and the settled flag.
    public mutating func tick(now: LocalTime, into out: inout [Effect]) -> [StationDirectory.Change] {
        lastTickAt = now
        let changes = directory.expire(now: now)
        if isQuerying {
            for (id, entry) in directory.entries.sorted(by: { $0.key.hex < $1.key.hex }) {
                if let last = lastQuery[id], now - last < Self.queryIntervalNs { continue }
                let peer = PeerAddress(host: entry.address, port: entry.port)
                out.append(.send(.query(Query()), to: .peer(peer), station: id))
                lastQuery[id] = now
                if firstQuery[id] == nil { firstQuery[id] = now }
            }
        }
        // Every other address the station is announced at is asked for a signed answer, listener
        // or not: only that moves the station there.
        for (id, entry) in directory.entries.sorted(by: { $0.key.hex < $1.key.hex }) {
            let candidates = entry.candidates
            lastPing[id] = lastPing[id]?.filter { candidates.contains($0.key) }
            for address in candidates {
                if let last = lastPing[id]?[address], now - last < Self.queryIntervalNs { continue }
                out.append(.send(.timePing(TimePing(clientSendNs: now.ns)), to: .peer(address), station: id))
                lastPing[id, default: [:]][address] = now
            }
        }
        if sweepDone && pendingResolutions.isEmpty {
            settled = directory.entries.allSatisfy { id, entry in
                entry.isListed || (firstQuery[id].map { now - $0 > 3 * Self.queryIntervalNs } ?? false)
            }
        }
        return changes
    }

    /// When ``tick(now:into:)`` next has work: a query, an expiry or the settle check.
    public var nextWakeup: LocalTime? {
        var wakeups: [LocalTime] = []
        if isQuerying {
            for id in directory.entries.keys {
                wakeups.append(lastQuery[id].map { $0 + Self.queryIntervalNs } ?? lastTickAt + 1)
            }
            if sweepDone && !settled {
                wakeups += firstQuery.values.map { $0 + 3 * Self.queryIntervalNs + 1 }
            }
        }
        for (id, entry) in directory.entries {
            for address in entry.candidates {
                wakeups.append(lastPing[id]?[address].map { $0 + Self.queryIntervalNs } ?? lastTickAt + 1)
            }
            if entry.snapshot != nil, let heard = entry.lastHeard {
                wakeups.append(heard + directory.silenceTimeoutNs + 1)
            }
        }
        return wakeups.filter { $0 > lastTickAt }.min()
    }
}
