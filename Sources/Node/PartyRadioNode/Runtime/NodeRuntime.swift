import Glibc
import PartyRadioCore
import PartyRadioNet

/// Runs one node's state machine on real I/O: the reactor around a ``NodeDriver``. It polls the
/// node's sockets and its inbox, sleeps until the machine's (or the player's) next deadline, and
/// hands what arrived to the driver, which runs the machine and gives its effects to ``NodeIO``:
/// sockets, Avahi, the player, the catalog, the store and the reporter. This is the one runtime
/// every command uses (docs/ARCHITECTURE.md); the simulated LAN runs the same driver on its own
/// ports.
///
/// Who owns what: the thread that first calls ``run()`` (or ``step(maxWaitMs:)``) owns the driver,
/// the machine, the sockets and the player driver, and is the only one to touch them (checked at
/// every step). Other threads — Avahi's poll thread, mpv's event thread, the stdin reader, signal
/// handlers, catalog tasks — only push ``NodeInput``s into ``inbox``, which wakes this thread
/// through a pipe.
final class NodeRuntime<Machine: NodeMachine> {
    let driver: NodeDriver<Machine>
    let io: NodeIO
    var inbox: Inbox<NodeInput> { io.inbox }
    var machine: Machine { driver.machine }
    private var closed = false
    /// The thread that steps the node, from its first step on.
    private var owner: pthread_t?

    /// Called on this thread after every input's effects were carried out (the DJ's web page
    /// state follows the machine through it).
    var afterEffects: ((Machine, [Effect], LocalTime) -> Void)? {
        get { driver.afterStep }
        set { driver.afterStep = newValue }
    }
    /// Where ``Effect/webReply(ticket:_:)`` answers go (the DJ's web page).
    var webReply: ((UInt64, WebReply) -> Void)? {
        get { io.webReply }
        set { io.webReply = newValue }
    }
    /// Where each datagram's sender's machine is looked up (the DJ's).
    var neighbours: NeighbourTable? {
        get { io.neighbours }
        set { io.neighbours = newValue }
    }

    /// Waits at most this long between looks at the clock, whatever the machine asks.
    static var maxWaitMs: Int32 { 250 }

    /// - Parameter outbox: what signs and seals the node's datagrams; by default the transport's.
    init(
        machine: Machine, settings: NodeSettings, interface: NetworkInterface, transport: Transport,
        outbox: Outbox? = nil, player: PlayerDriver?, catalog: (any TrackCatalog)? = nil,
        recorder: DJRecorder? = nil, knownStations: KnownStations? = nil, avahi: AvahiSession? = nil,
        inbox: Inbox<NodeInput>
    ) throws(NodeError) {
        io = try NodeIO(
            settings: settings, interface: interface, transport: transport, player: player, catalog: catalog,
            recorder: recorder, knownStations: knownStations, avahi: avahi, inbox: inbox)
        driver = NodeDriver(machine: machine, outbox: outbox ?? transport.outbox(), ports: io)
    }

    deinit { close() }

    /// Runs the machine until it finishes; throws its error, if it failed.
    func run() throws(NodeError) {
        while !driver.isDone { step(maxWaitMs: Self.maxWaitMs) }
        if driver.fatal != nil && !driver.machine.isFinished { driver.deliver(.quit) }  // says leave, reports the stop
        close()
        if let error = driver.fatal ?? driver.machine.exitError { throw error }
    }

    /// One turn of the loop: waits for traffic, an input or the next deadline (at most
    /// `maxWaitMs`), then hands everything that arrived to the driver.
    func step(maxWaitMs: Int32) {
        assertOwnerThread()
        if !driver.started {
            io.recorder?.begin(at: io.now())
            driver.start()
        }
        guard !driver.machine.isFinished else { return }
        var timeoutMs = maxWaitMs
        if let wake = [driver.nextWakeup, io.player?.nextWakeup, io.nextTimer].compactMap({ $0 }).min() {
            let untilNs = max(0, wake - io.now())
            timeoutMs = Int32(min(Int64(maxWaitMs), (untilNs + Nanos.perMillisecond - 1) / Nanos.perMillisecond))
        }
        _ = waitReadable(io.descriptors, timeoutMs: timeoutMs)
        // Each datagram is stamped as it comes off its socket; the sockets are read after the inbox,
        // so no datagram is handled earlier than the inputs before it.
        let inputs = io.inbox.drain()
        driver.step(inputs: inputs, arrivals: io.drain())
        io.fireTimers(at: io.now())
        io.player?.step(now: io.now())
        // A player made in the background that could not be made (no libmpv) stops the node.
        if let failure = io.player?.failure { driver.fail(failure) }
    }

    /// The node's thread is the one that stepped it first; any other is a bug (its state is not
    /// guarded), as swift-nio's `preconditionInEventLoop` says of an event loop.
    private func assertOwnerThread() {
        let me = pthread_self()
        guard let owner else {
            owner = me
            return
        }
        precondition(pthread_equal(owner, me) != 0, "a node runtime was stepped from a thread that does not own it")
    }

    /// Withdraws from DNS-SD and stops the player; idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        io.close()
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
