/// Runs one node's machine, without a loop and without I/O of its own: what a turn brought (inputs
/// and datagrams) goes to the machine in order, at instants that never go back, the datagrams in
/// batches with one save first, a group datagram's twin from the other family dropped, and every
/// effect handed to its port (``NodePorts``), a send through the ``Outbox``.
///
/// The node runtime calls ``step(inputs:arrivals:)`` after each `poll`; the simulated LAN calls it
/// for each event of a simulated host. Both therefore run this code, as FoundationDB's simulator
/// and TigerBeetle's VOPR run the real code on simulated ports.
public final class NodeDriver<Machine: NodeMachine> {
    public private(set) var machine: Machine
    /// Numbers, signs and seals what the machine sends.
    public private(set) var outbox: Outbox
    private let ports: any NodePorts
    /// Drops the second copy of a group datagram heard over both families.
    private var twins = GroupTwins()
    /// The families whose group the node joined.
    private var groupFamilies: [AddressFamily] = []
    /// The instant of the last input handled: the machine sees time only go forward.
    private var lastHandled = LocalTime(ns: .min)
    /// Whether the machine has had ``NodeInput/start``.
    public private(set) var started = false
    /// A failure outside the machine (the group could not be joined, the player could not be
    /// made): the node stops with it.
    public private(set) var fatal: NodeError?
    /// Called after every input's (or batch's) effects were carried out, with the machine, the
    /// effects and the instant (the DJ's web page and MPRIS follow the machine through it).
    public var afterStep: ((Machine, [Effect], LocalTime) -> Void)?

    /// Datagrams handled together, with one save before their effects (``NodeMachine/handle(batch:)``).
    public static var datagramBatch: Int { 64 }

    public init(machine: Machine, outbox: Outbox, ports: any NodePorts) {
        self.machine = machine
        self.outbox = outbox
        self.ports = ports
    }

    /// Whether the node is done: its machine finished, or something outside it failed.
    public var isDone: Bool { machine.isFinished || fatal != nil }

    /// When the machine wants ``NodeInput/timer``.
    public var nextWakeup: LocalTime? { machine.nextWakeup }

    /// Stops the node with `error` (the first failure wins).
    public func fail(_ error: NodeError) {
        if fatal == nil { fatal = error }
    }

    /// Seals what goes to `station` from the start (a private DJ's own station).
    public func sealFor(_ station: StationID) { outbox.sealFor(station) }

    /// One turn: starts the machine on the first, then hands it `inputs` (each at the clock's
    /// reading as it is handled), then `arrivals` (a group datagram's twin dropped, in the order
    /// they came off their sockets, in batches of ``datagramBatch``), then the timer if it is due.
    public func step(inputs: [NodeInput] = [], arrivals: [Arrival] = []) {
        start()
        for input in inputs { deliver(input) }
        var admitted = arrivals
        if groupFamilies.count > 1 {
            admitted = arrivals.filter { arrival in
                guard let family = arrival.group else { return true }
                return twins.admit(arrival.bytes, family: family, at: arrival.at)
            }
        }
        // Each datagram is handled at the instant it came off its socket (never earlier than the
        // inputs before it: the clamp below).
        let ordered = admitted.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
        var start = 0
        while start < ordered.count {
            let batch = ordered[start..<min(start + Self.datagramBatch, ordered.count)]
            deliver(
                batch: batch.map { arrival in
                    let a = arrival.element
                    return (.datagram(a.bytes, from: a.from, machine: a.machine), a.at)
                })
            start += batch.count
        }
        if let wake = machine.nextWakeup, ports.now() >= wake { deliver(.timer) }
    }

    /// Gives the machine ``NodeInput/start``, once (the first ``step(inputs:arrivals:)`` does it too).
    public func start() {
        guard !started else { return }
        started = true
        deliver(.start)
    }

    /// Hands one input to the machine now (``NodeInput/quit`` as a node stops).
    public func deliver(_ input: NodeInput) {
        guard !machine.isFinished else { return }
        let now = max(ports.now(), lastHandled)
        lastHandled = now
        let effects = machine.handle(input, at: now)
        for effect in effects { execute(effect) }
        afterStep?(machine, effects, now)
    }

    /// Hands several inputs to the machine as one batch and then carries out all their effects:
    /// one save, first, so nothing acknowledged is unsaved and a burst of 64 votes costs one
    /// transaction (and one snapshot), not 64.
    private func deliver(batch inputs: [(NodeInput, LocalTime)]) {
        guard !machine.isFinished else { return }
        let timed = inputs.map { input, instant in
            lastHandled = max(instant, lastHandled)
            return (input, lastHandled)
        }
        let effects = machine.handle(batch: timed)
        for effect in effects { execute(effect) }
        afterStep?(machine, effects, lastHandled)
    }

    private func execute(_ effect: Effect) {
        switch effect {
        case .send(let message, let destination, let station):
            guard
                let bytes = outbox.datagram(
                    for: message, station: station, now: ports.now(), realTimeNs: ports.realTimeNs())
            else { return ports.log(.wire, "cannot encode \(message.kind) for \(destination)") }
            ports.send(bytes, to: destination)
        case .sealFor(let station):
            outbox.sealFor(station)
        case .sessionFor(let station, let key):
            outbox.sessionFor(station, stationKey: key)
            ports.log(.wire, "votes to station \(station.hex) go with a session MAC (its advert says mac=1)")
        case .cookieFrom(let station, let challenge):
            let taken = outbox.takeCookie(challenge, from: station, now: ports.now())
            ports.log(
                .wire,
                taken
                    ? "station \(station.hex) is busy: what goes there shows its admission cookie"
                    : "ignored a cookie challenge from station \(station.hex) that answers nothing sent there")
        case .publish(let name, let port, let txt):
            ports.publish(name: name, port: port, txt: txt)
        case .browse(let name):
            ports.browse(resolving: name)
        case .joinGroup(let group):
            do { groupFamilies = try ports.joinGroup(group) } catch { fail(error) }
        case .player(let command):
            ports.drivePlayer(command)
        case .follow(let view):
            ports.follow(view)
        case .live(let input):
            ports.live(input)
        case .livePlayer(let call):
            ports.callPlayer(call)
        case .catalog(let request):
            ports.ask(request)
        case .report(let event):
            ports.report(event)
        case .log(let topic, let message):
            ports.log(topic, message)
        case .record(let play):
            ports.record(play)
        case .save(let station):
            // Synchronous, and first among its step's effects: nothing acknowledged is unsaved.
            ports.save(station)
        case .webReply(let ticket, let reply):
            ports.webReply(ticket: ticket, reply)
        case .pin(let name, let key):
            ports.pin(name: name, key: key)
        case .keepSpeaker(let state):
            ports.keepSpeaker(state)
        }
    }
}
