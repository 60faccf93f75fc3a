import PartyRadioCore
import PartyRadioNet

/// Runs one node's state machine on real I/O: its sockets, Avahi, the player, the catalog and
/// the clock. This is the one runtime every command uses (docs/ARCHITECTURE.md).
///
/// Who owns what: the thread that calls ``run()`` (or ``step(maxWaitMs:)``) owns the machine,
/// the sockets and the player driver, and is the only one to touch them. Other threads — Avahi's
/// poll thread, mpv's event thread, the stdin reader, signal handlers, catalog tasks — only
/// push ``NodeInput``s into ``inbox``, which wakes this thread through a pipe.
final class NodeRuntime<Machine: NodeMachine> {
    private(set) var machine: Machine
    let inbox: Inbox<NodeInput>
    let interface: NetworkInterface
    private let clock: NodeClock
    private let reporter: any NodeReporter
    private let transport: Transport
    private let avahi: AvahiSession
    /// The group sockets once joined: one per family the node speaks.
    private var groupSockets: [UDPSocket] = []
    /// Drops the second copy of a group datagram heard over both families.
    private var twins = GroupTwins()
    private let player: PlayerDriver?
    private let catalog: (any TrackCatalog)?
    private let recorder: DJRecorder?
    /// Where a listener remembers stations' keys.
    private let knownStations: KnownStations?
    /// `--domain`: browsed besides mDNS once the machine browses.
    private let domain: DomainSettings?
    private var domainBrowser: DomainBrowser?
    private var started = false
    /// The instant of the last input handled: the machine sees time only go forward.
    private var lastHandled = LocalTime(ns: .min)
    /// A failure of the runtime's own (the group could not be joined): the node stops with it.
    private var fatal: NodeError?
    private var closed = false
    /// Called on this thread after every input's effects were carried out (the DJ's web page
    /// state follows the machine through it).
    var afterEffects: ((Machine, [Effect], LocalTime) -> Void)?
    /// Where ``Effect/webReply(ticket:_:)`` answers go (the DJ's web page).
    var webReply: ((UInt64, Message) -> Void)?

    /// Waits at most this long between looks at the clock, whatever the machine asks.
    static var maxWaitMs: Int32 { 250 }

    init(
        machine: Machine, settings: NodeSettings, interface: NetworkInterface, transport: Transport,
        player: PlayerDriver?, catalog: (any TrackCatalog)? = nil, recorder: DJRecorder? = nil,
        knownStations: KnownStations? = nil, avahi: AvahiSession? = nil, inbox: Inbox<NodeInput>
    ) throws(NodeError) {
        self.knownStations = knownStations
        domain = settings.domain
        self.machine = machine
        self.inbox = inbox
        self.interface = interface
        clock = settings.clock
        reporter = settings.reporter
        self.transport = transport
        self.player = player
        self.catalog = catalog
        self.recorder = recorder
        if let avahi {
            self.avahi = avahi  // made (and publishing) before the rest of the node
            return
        }
        do {
            self.avahi = try AvahiSession(interfaceIndex: interface.index, families: interface.families) { event in
                inbox.push(.discovery(DiscoveryEvent(event)))
            }
        } catch { throw NodeError(.discovery, error.description, cause: error) }
    }

    deinit { close() }

    /// Runs the machine until it finishes; throws its error, if it failed.
    func run() throws(NodeError) {
        while !machine.isFinished && fatal == nil { step(maxWaitMs: Self.maxWaitMs) }
        if fatal != nil && !machine.isFinished { deliver(.quit) }  // says leave, reports the stop
        close()
        if let error = fatal ?? machine.exitError { throw error }
    }

    /// One turn of the loop: waits for traffic, an input or the next deadline (at most
    /// `maxWaitMs`), then hands everything that arrived to the machine.
    func step(maxWaitMs: Int32) {
        if !started {
            started = true
            recorder?.begin(at: clock.now())
            deliver(.start)
        }
        guard !machine.isFinished else { return }
        let now = clock.now()
        var timeoutMs = maxWaitMs
        if let wake = [machine.nextWakeup, player?.nextWakeup].compactMap({ $0 }).min() {
            let untilNs = max(0, wake - now)
            timeoutMs = Int32(min(Int64(maxWaitMs), (untilNs + Nanos.perMillisecond - 1) / Nanos.perMillisecond))
        }
        let descriptors =
            [inbox.wakeDescriptor] + transport.sockets.sockets.map(\.descriptor) + groupSockets.map(\.descriptor)
        _ = waitReadable(descriptors, timeoutMs: timeoutMs)
        for input in inbox.drain() { deliver(input) }
        // Each datagram is handled at the instant it came off its socket (never earlier than the
        // inputs before it: the sockets are read after the inbox was handled).
        var arrived = transport.sockets.sockets.flatMap { Transport.drain($0, clock: clock) }
        for socket in groupSockets {
            var heard = Transport.drain(socket, clock: clock)
            if groupSockets.count > 1 {
                heard = heard.filter { twins.admit($0.bytes, family: socket.family, at: $0.at) }
            }
            arrived += heard
        }
        let ordered = arrived.sorted(by: { $0.at < $1.at })
        var start = 0
        while start < ordered.count {
            let batch = ordered[start..<min(start + Self.datagramBatch, ordered.count)]
            deliver(batch: batch.map { (.datagram($0.bytes, from: $0.from), $0.at) })
            start += batch.count
        }
        if let wake = machine.nextWakeup, clock.now() >= wake { deliver(.timer) }
        player?.step()
        // A player made in the background that could not be made (no libmpv) stops the node.
        if fatal == nil, let failure = player?.failure { fatal = failure }
    }

    /// Withdraws from DNS-SD and stops the player; idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        recorder?.end(at: clock.now())
        avahi.close()
        domainBrowser?.stop()
        player?.shutdown()
        for socket in groupSockets { socket.close() }
    }

    /// Datagrams handled together, with one save before their effects (see ``deliver(batch:)``).
    static var datagramBatch: Int { 64 }

    /// Hands several inputs to the machine as one batch (``NodeMachine/handle(batch:)``) and then
    /// carries out all their effects: one save, first, so nothing acknowledged is unsaved and a
    /// burst of 64 votes costs one transaction (and one snapshot), not 64.
    private func deliver(batch inputs: [(NodeInput, LocalTime)]) {
        guard !machine.isFinished else { return }
        let timed = inputs.map { input, instant in
            lastHandled = max(instant, lastHandled)
            return (input, lastHandled)
        }
        let effects = machine.handle(batch: timed)
        for effect in effects { execute(effect) }
        afterEffects?(machine, effects, lastHandled)
    }

    private func deliver(_ input: NodeInput, at instant: LocalTime? = nil) {
        guard !machine.isFinished else { return }
        let now = max(instant ?? clock.now(), lastHandled)
        lastHandled = now
        let effects = machine.handle(input, at: now)
        for effect in effects { execute(effect) }
        afterEffects?(machine, effects, now)
    }

    private func execute(_ effect: Effect) {
        switch effect {
        case .send(let message, let destination, let station):
            let addresses = socketAddresses(destination)
            if addresses.isEmpty {
                Log.debug(.wire, "cannot send to \(destination): not an address this node can reach")
            }
            // A group datagram goes to each family's group: the same bytes, so a listener that
            // hears both drops the twin (``GroupTwins``).
            transport.send(message, to: addresses, station: station)
        case .sealFor(let station):
            transport.sealFor(station)
        case .sessionFor(let station, let key):
            transport.sessionFor(station, stationKey: key)
        case .publish(let name, let port, let txt):
            do { try avahi.publish(name: name, type: StationAdvert.serviceType, port: port, txt: txt) } catch {
                inbox.push(.discovery(.failed(error.description)))
            }
        case .browse(let name):
            do { try avahi.browse(type: StationAdvert.serviceType) } catch {
                inbox.push(.discovery(.failed(error.description)))
            }
            if let name { avahi.resolveStation(named: name, interface: interface, inbox: inbox) }
            if let domain, domainBrowser == nil {
                do {
                    domainBrowser = try DomainBrowser(
                        settings: domain, families: interface.families, inbox: inbox, reporter: reporter)
                } catch {
                    inbox.push(.discovery(.failed(error.description)))
                }
            }
        case .joinGroup(let group):
            joinGroup(group)
        case .player(let command):
            player?.execute(command)
        case .follow(let view):
            player?.follow(view)
        case .catalog(let request):
            ask(request)
        case .report(let event):
            reporter.report(event)
        case .log(let topic, let message):
            Log.debug(topic, message)
        case .record(let play):
            recorder?.record(play)
        case .save(let station):
            // Synchronous, and first among its step's effects: nothing acknowledged is unsaved.
            recorder?.save(station, at: clock.now())
        case .webReply(let ticket, let message):
            webReply?(ticket, message)
        case .pin(let name, let key):
            do { try knownStations?.pin(name, key: key) } catch {
                reporter.report(
                    .warning("Could not remember the key of '\(name)' in \(knownStations?.url.path ?? ""): \(error)."))
            }
        }
    }

    /// Where `destination` is, in the families this node's sockets speak: a peer's one address,
    /// or the group's address in every family (IPv4 first).
    private func socketAddresses(_ destination: Destination) -> [SocketAddress] {
        switch destination {
        case .peer(let peer):
            guard let address = SocketAddress(peer: peer), transport.sockets.socket(for: address.family) != nil
            else { return [] }
            return [address]
        case .group(let group):
            return transport.sockets.families.map { SocketAddress(group, family: $0, scope: UInt32(interface.index)) }
        }
    }

    /// Joins `group` on the interface in every family this node speaks (docs/NETWORKS.md). On dual
    /// stack one family that cannot join is only logged; the node stops when none can.
    private func joinGroup(_ group: MulticastGroup) {
        for socket in groupSockets { socket.close() }
        groupSockets = []
        var failure: (address: SocketAddress, error: SystemCallError)?
        for family in transport.sockets.families {
            let address = SocketAddress(group, family: family, scope: UInt32(interface.index))
            var opened: UDPSocket?
            do throws(SystemCallError) {
                let socket = try UDPSocket(family: family)
                opened = socket
                try socket.allowAddressReuse()
                try socket.bind(address)
                try socket.join(group, interface: interface)
                groupSockets.append(socket)
            } catch {
                opened?.close()
                Log.debug(.wire, "cannot join the group at \(address): \(error)")
                failure = failure ?? (address, error)
            }
        }
        if groupSockets.isEmpty, let failure {
            let shown = failure.address.family == .ipv4 ? "\(group)" : "\(failure.address)"
            fatal = NodeError(
                .network, "Cannot join the station's multicast group \(shown): \(failure.error); check --interface.",
                cause: failure.error)
        }
    }

    /// Runs a catalog request as a task; its answer comes back through the inbox.
    private func ask(_ request: CatalogRequest) {
        let inbox = self.inbox
        guard let catalog else {
            if case .requestedTrack(_, let ticket) = request {
                return inbox.push(
                    .catalog(.requestedTrack(nil, failure: "The catalog is not available to this DJ.", for: ticket)))
            }
            return reporter.report(.warning("The catalog is not available to this DJ."))
        }
        Task {
            switch request {
            case .requestedTrack(let id, let ticket):
                do {
                    let track = try await catalog.lookup([id]).first { $0.id == id }
                    inbox.push(.catalog(.requestedTrack(track, failure: nil, for: ticket)))
                } catch {
                    inbox.push(
                        .catalog(.requestedTrack(nil, failure: "Looking up \(id) failed: \(error)", for: ticket)))
                }
            case .search(let term):
                do { inbox.push(.catalog(.results(term: term, tracks: try await catalog.search(term)))) } catch {
                    inbox.push(.catalog(.tracks([], failure: "The search for '\(term)' failed: \(error)")))
                }
            case .lookup(let ids):
                do {
                    let tracks = try await catalog.lookup(ids)
                    let missing = ids.filter { id in !tracks.contains { $0.id == id } }
                    let failure = missing.isEmpty ? nil : "No playable track for ID \(missing.joined(separator: ", "))."
                    inbox.push(.catalog(.tracks(tracks, failure: failure)))
                } catch {
                    inbox.push(.catalog(.tracks([], failure: "Adding \(ids.joined(separator: ", ")) failed: \(error)")))
                }
            }
        }
    }
}

extension DiscoveryEvent {
    /// The Avahi adapter's event, as the core sees it.
    init(_ event: AvahiEvent) {
        switch event {
        case .discovered(let name): self = .discovered(name: name)
        case .resolved(let name, let address, let port, let txt):
            self = .resolved(name: name, address: address, port: port, txt: txt)
        case .unresolved(let name): self = .unresolved(name: name)
        case .removed(let name): self = .removed(name: name)
        case .allForNow: self = .allForNow
        case .published(let name): self = .published(name: name)
        case .renamed(let from, let to): self = .renamed(from: from, to: to)
        case .failed(let message): self = .failed(message)
        case .daemonLost: self = .daemonLost
        case .daemonBack: self = .daemonBack
        }
    }
}

extension AvahiSession {
    /// A station the guest named, asked for at once besides the browse: Avahi's resolver (an
    /// answer from its cache, else about 100 ms before avahi-daemon sends the query) and a one-shot
    /// mDNS query of the node's own (a few milliseconds, ``OneShotResolver``). What they find waits
    /// in the inbox as the browser's finds do; a name that is a prefix or an ID finds nothing here.
    func resolveStation(named name: String, interface: NetworkInterface, inbox: Inbox<NodeInput>) {
        resolve(name: name, type: StationAdvert.serviceType)
        OneShotResolver.start(instance: name, type: StationAdvert.serviceType, interface: interface) {
            address, port, txt in
            Log.debug(.discovery, "one-shot mDNS answer for '\(name)': \(address) port \(port)")
            inbox.push(.discovery(.resolved(name: name, address: address, port: port, txt: txt)))
        }
    }
}
