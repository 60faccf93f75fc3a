import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// Finds stations and keeps them honest: browses DNS-SD through Avahi, queries each
/// resolved station over unicast every ``queryIntervalNs``, lists it only once it answers,
/// and drops it when it is withdrawn, says goodbye or falls silent.
///
/// Not a thread of its own: the owner calls ``pump(timeoutMs:)`` from its loop.
public final class StationObserver: @unchecked Sendable {
    public let inbox: Inbox<NodeInput>
    public private(set) var directory = StationDirectory()
    /// True once Avahi finished its first sweep and every station found then answered or timed out.
    public private(set) var settled = false
    public let transport: Transport
    let interface: NetworkInterface
    private let avahi: AvahiSession
    private let clock: NodeClock
    private var lastQueryNs: [StationID: Int64] = [:]
    private var firstQueryNs: [StationID: Int64] = [:]
    private var pendingResolutions: Set<String> = []
    private var sweepDone = false
    private var failure: String?
    /// Commands and quits that arrived while pumping, for the owner to act on.
    public private(set) var otherInputs: [NodeInput] = []

    public let queryIntervalNs = Nanos.ms(500)
    /// Off once a listener has tuned in: it hears the station on the group and only needs the
    /// observer for DNS-SD (a new address, a withdrawal), not for a second stream of snapshots.
    public var isQuerying = true

    public init(settings: NodeSettings, inbox: Inbox<NodeInput> = Inbox()) throws(NodeError) {
        self.inbox = inbox
        clock = settings.clock
        interface = try settings.chooseInterface()
        let identity = try settings.identity("listener")
        let socket = try settings.unicastSocket(interface: interface)
        transport = settings.transport(socket: socket, identity: identity, stationID: StationID(rawValue: 0))
        avahi = try settings.avahi(interface: interface, inbox: inbox)
        do { try avahi.browse(type: StationAdvert.serviceType) } catch { throw NodeError(error.description) }
    }

    public func close() { avahi.close() }

    /// Stations heard from, with their positions now.
    public func summaries() -> [StationSummary] {
        let now = clock.now()
        return directory.listed.compactMap { entry in
            guard let snapshot = entry.snapshot else { return nil }
            return StationSummary(
                id: entry.advert.stationID, serviceName: entry.serviceName, address: entry.address, port: entry.port,
                advert: entry.advert, snapshot: snapshot,
                positionNs: snapshot.anchor.position(
                    atDJTime: now,
                    durationNs: snapshot.nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond }))
        }
    }

    /// Waits up to `timeoutMs` for traffic, then handles it. Returns the directory changes.
    /// Throws when Avahi fails (the daemon went away).
    public func pump(timeoutMs: Int32) throws(NodeError) -> [StationDirectory.Change] {
        _ = waitReadable([inbox.wakeDescriptor, transport.socket.descriptor], timeoutMs: timeoutMs)
        return try handleReady()
    }

    /// Handles whatever is waiting without blocking (for owners that poll themselves).
    public func handleReady() throws(NodeError) -> [StationDirectory.Change] {
        var changes: [StationDirectory.Change] = []
        for input in inbox.drain() {
            guard case .avahi(let box) = input else {
                otherInputs.append(input)
                continue
            }
            changes += handle(box.event)
        }
        if let failure { throw NodeError(failure) }
        let now = clock.now()
        let keys = Dictionary(directory.entries.map { ($0.key, $0.value.advert.publicKey) }, uniquingKeysWith: { a, _ in a })
        for received in transport.receiveAll(policy: .stations(keys), clock: clock) {
            let id = received.datagram.header.stationID
            switch received.message {
            case .stateSnapshot(let snapshot):
                if let change = directory.heard(id, snapshot: snapshot, now: now) { changes.append(change) }
            case .goodbye:
                if let change = directory.goodbye(id) { changes.append(change) }
                lastQueryNs[id] = nil
                firstQueryNs[id] = nil
            default:
                break
            }
        }
        changes += directory.expire(now: now)
        if isQuerying { queryStations(now: now) }
        updateSettled(now: now)
        return changes
    }

    /// Takes the commands and quits collected while pumping.
    public func takeOtherInputs() -> [NodeInput] {
        defer { otherInputs.removeAll() }
        return otherInputs
    }

    private func handle(_ event: AvahiEvent) -> [StationDirectory.Change] {
        switch event {
        case .discovered(let name):
            pendingResolutions.insert(name)
        case .unresolved(let name):
            pendingResolutions.remove(name)
        case .resolved(let name, let address, let port, let txt):
            pendingResolutions.remove(name)
            guard let advert = try? StationAdvert(txtRecord: txt) else { return [] }
            directory.resolved(serviceName: name, advert: advert, address: address, port: port)
            lastQueryNs[advert.stationID] = nil  // query the (possibly new) address at once
        case .removed(let name):
            pendingResolutions.remove(name)
            return directory.removed(serviceName: name)
        case .allForNow:
            sweepDone = true
        case .failed(let message):
            failure = message
        case .published, .renamed:
            break
        }
        return []
    }

    private func queryStations(now: Int64) {
        for (id, entry) in directory.entries {
            if let last = lastQueryNs[id], now - last < queryIntervalNs { continue }
            guard let address = SocketAddress(entry.address, port: entry.port) else { continue }
            transport.send(.query(Query()), to: address, station: id)
            lastQueryNs[id] = now
            if firstQueryNs[id] == nil { firstQueryNs[id] = now }
        }
    }

    private func updateSettled(now: Int64) {
        guard sweepDone, pendingResolutions.isEmpty else { return }
        // Every known station has answered, or has had a fair chance to (three query rounds).
        settled = directory.entries.allSatisfy { id, entry in
            entry.isListed || (firstQueryNs[id].map { now - $0 > 3 * queryIntervalNs } ?? false)
        }
    }
}
