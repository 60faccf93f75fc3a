import NodeTestSupport
import PartyRadioCore

/// What the network does to datagrams in one run.
struct SimFaults: CustomStringConvertible {
    var loss = 0.0
    var duplicate = 0.0
    var minDelayNs: Int64 = 200_000
    var maxDelayNs: Int64 = 3_000_000
    /// A datagram is held back 20–200 ms now and then (Wi-Fi retries): reordering beyond jitter.
    var spike = 0.0

    var description: String {
        "loss \(Int(loss * 100))%, dup \(Int(duplicate * 100))%, delay \(minDelayNs / 1000)–\(maxDelayNs / 1000) µs, "
            + "spikes \(Int(spike * 100))%"
    }
}

/// One machine of the simulated LAN: any of the real machines, behind one type so that one
/// ``NodeDriver`` type drives them all.
enum SimMachine: NodeMachine {
    case dj(DJMachine)
    case listener(ListenerMachine)
    case voter(GuestExchange<GuestVote>)
    case chatter(GuestExchange<GuestChat>)
    case requester(GuestExchange<GuestTrackRequest>)
    case requestVoter(GuestExchange<GuestRequestVote>)

    mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        switch self {
        case .dj(var m):
            defer { self = .dj(m) }
            return m.handle(input, at: now)
        case .listener(var m):
            defer { self = .listener(m) }
            return m.handle(input, at: now)
        case .voter(var m):
            defer { self = .voter(m) }
            return m.handle(input, at: now)
        case .chatter(var m):
            defer { self = .chatter(m) }
            return m.handle(input, at: now)
        case .requester(var m):
            defer { self = .requester(m) }
            return m.handle(input, at: now)
        case .requestVoter(var m):
            defer { self = .requestVoter(m) }
            return m.handle(input, at: now)
        }
    }

    /// Each machine's own batch handling (the DJ coalesces a batch's snapshots; the rest take the
    /// protocol's default).
    mutating func handle(batch inputs: [(NodeInput, LocalTime)]) -> [Effect] {
        switch self {
        case .dj(var m):
            defer { self = .dj(m) }
            return m.handle(batch: inputs)
        case .listener(var m):
            defer { self = .listener(m) }
            return m.handle(batch: inputs)
        case .voter(var m):
            defer { self = .voter(m) }
            return m.handle(batch: inputs)
        case .chatter(var m):
            defer { self = .chatter(m) }
            return m.handle(batch: inputs)
        case .requester(var m):
            defer { self = .requester(m) }
            return m.handle(batch: inputs)
        case .requestVoter(var m):
            defer { self = .requestVoter(m) }
            return m.handle(batch: inputs)
        }
    }

    var nextWakeup: LocalTime? {
        switch self {
        case .dj(let m): m.nextWakeup
        case .listener(let m): m.nextWakeup
        case .voter(let m): m.nextWakeup
        case .chatter(let m): m.nextWakeup
        case .requester(let m): m.nextWakeup
        case .requestVoter(let m): m.nextWakeup
        }
    }

    var isFinished: Bool {
        switch self {
        case .dj(let m): m.isFinished
        case .listener(let m): m.isFinished
        case .voter(let m): m.isFinished
        case .chatter(let m): m.isFinished
        case .requester(let m): m.isFinished
        case .requestVoter(let m): m.isFinished
        }
    }

    /// What the machine's datagram filter dropped, by reason.
    var drops: DropCounters {
        switch self {
        case .dj(let m): m.filter.drops
        case .listener(let m): m.filter.drops
        case .voter(let m): m.filter.drops
        case .chatter(let m): m.filter.drops
        case .requester(let m): m.filter.drops
        case .requestVoter(let m): m.filter.drops
        }
    }

    var exitError: NodeError? {
        switch self {
        case .dj(let m): m.exitError
        case .listener(let m): m.exitError
        case .voter(let m): m.exitError
        case .chatter(let m): m.exitError
        case .requester(let m): m.exitError
        case .requestVoter(let m): m.exitError
        }
    }
}

/// A host: its machine on the real ``NodeDriver`` and ``Outbox``, its clock (offset and drift
/// against the true time), its address and key, and what its ports saw.
final class SimNode {
    let index: Int
    let name: String
    /// Set once the LAN made the node's ports (``SimLAN/add(name:machine:key:offsetNs:driftPPM:)``).
    // swift-format-ignore: NeverUseImplicitlyUnwrappedOptionals
    fileprivate(set) var driver: NodeDriver<SimMachine>!
    var machine: SimMachine { driver.machine }
    let address: PeerAddress
    /// The machine it runs on, as the DJ's runtime would find it in the neighbour table (nil: its
    /// address stands for it). Hosts sharing one are one machine with several addresses.
    var machineID: MachineID?
    let signer: ChecksumSigner
    let offsetNs: Int64
    let driftPPM: Double
    var alive = true
    var groups: Set<MulticastGroup> = []
    /// Beyond a router (a listener that found the station in a unicast DNS-SD domain): no group
    /// datagram reaches it, whatever it joined; it hears the DJ only by unicast.
    var offLink = false
    var browsing = false
    var timerGeneration = 0
    var reports: [(time: Int64, event: NodeEvent)] = []
    /// Live frames and repairs the machine handed to its live output, with the true time.
    var live: [(time: Int64, input: LiveReceived)] = []
    var view: StationClockView?
    /// The player as the machine commanded it: what is loaded, and whether it plays.
    var playerTrack: String?
    var playerPaused = true
    /// The player's volume and delay trim as the machine last set them (a speaker's), and what a
    /// speaker kept (``Effect/keepSpeaker(_:)``), with the true time.
    var playerVolume = 100
    var delayTrimNs: Int64 = 0
    var kept: [(time: Int64, state: SpeakerControlState)] = []
    /// The machine's load commands (true time, track ID, source) and every list of sources to fetch ahead.
    var asked: [(time: Int64, trackID: String, source: String)] = []
    var prefetches: [(time: Int64, urls: [String])] = []
    /// The real load plan, carrying out the machine's player commands as the player driver does,
    /// on the simulated cache (a listener's; the DJ has none) and a player that is always made.
    var plan = LoadPlan(configuration: .init())
    var cache: SimCache
    /// What the load plan loaded (true time, track ID, the track's URL, where from), and what it
    /// asked of the cache (true time, URL, whether at once).
    var loads: [(time: Int64, trackID: String, source: String, from: LoadPlan.Source)] = []
    var fetches: [(time: Int64, url: String, now: Bool)] = []
    var playerGeneration = 0
    var synchronizedAt: Int64?
    var finishedAt: Int64?
    var crashedAt: Int64?
    /// Second copies the network made of datagrams to this node: the most replays it may see, since
    /// every sender numbers each datagram above the last (``Outbox``).
    var duplicatesIn = 0
    var isDJ: Bool { if case .dj = machine { true } else { false } }

    init(index: Int, name: String, key: PublicKey, offsetNs: Int64, driftPPM: Double, cacheSeed: UInt64) {
        cache = SimCache(seed: cacheSeed)
        self.index = index
        self.name = name
        address = PeerAddress(host: "10.9.0.\(index + 1)", port: UInt16(40_000 + index))
        signer = ChecksumSigner(publicKey: key)
        self.offsetNs = offsetNs
        self.driftPPM = driftPPM
    }

    /// This node's clock reading at true instant `t`.
    func local(_ t: Int64) -> LocalTime {
        LocalTime(ns: t + offsetNs + Int64((Double(t) * driftPPM / 1_000_000).rounded()))
    }

    /// The first true instant at which this node's clock reads at least `local`.
    func trueTime(reaching local: LocalTime) -> Int64 {
        var t = Int64((Double(local.ns - offsetNs) / (1 + driftPPM / 1_000_000)).rounded(.down))
        while self.local(t) < local { t += 1_000 }
        return t
    }
}

/// A host's ports (``NodePorts``) on the simulated LAN: its clock reads the LAN's true time through
/// its offset and drift, its datagrams go into the LAN's network, its player and reports are noted
/// on the node for the checker.
private final class SimPorts: NodePorts {
    unowned let lan: SimLAN
    unowned let node: SimNode

    init(lan: SimLAN, node: SimNode) {
        self.lan = lan
        self.node = node
    }

    func now() -> LocalTime { node.local(lan.now) }
    /// The host's real-time clock is its (skewed) clock: sequence numbers follow it as on a machine.
    func realTimeNs() -> Int64 { node.local(lan.now).ns }
    func send(_ datagram: [UInt8], to destination: Destination) { lan.send(datagram, from: node, to: destination) }

    func joinGroup(_ group: MulticastGroup) throws(NodeError) -> [AddressFamily] {
        node.groups.insert(group)
        return [.ipv4]
    }

    func publish(name: String, port: UInt16, txt: [String]) { lan.publish(name: name, port: port, txt: txt, by: node) }
    func browse(resolving name: String?) { lan.browse(by: node) }

    func drivePlayer(_ command: PlayerCommand) {
        lan.drivePlan(node, command)
        switch command {
        case .load(let track, let paused):
            node.playerTrack = track.id
            node.playerPaused = paused
            node.asked.append((lan.now, track.id, track.source))
        case .prefetch(let urls):
            node.prefetches.append((lan.now, urls))
        case .fetch:
            break
        case .pause: node.playerPaused = true
        case .resume: node.playerPaused = false
        case .volume(let level): node.playerVolume = level
        case .delayTrim(let ns): node.delayTrimNs = ns
        case .stop:
            node.playerTrack = nil
            node.playerPaused = true
        }
    }

    func follow(_ view: StationClockView) { node.view = view }
    func live(_ input: LiveReceived) { node.live.append((lan.now, input)) }

    func ask(_ request: CatalogRequest) {
        lan.schedule(
            at: lan.now + 10_000_000,
            .input(node.index, .catalog(.tracks([], failure: "The simulation has no catalog."))))
    }

    // The DJ's plays are the stats store's (unit-tested in PartyRadioCoreTests and the storage tests).
    func save(_ station: SavedStation) {}
    func record(_ play: PlayRecord) {}
    func pin(name: String, key: PublicKey) {}
    func keepSpeaker(_ state: SpeakerControlState) { node.kept.append((lan.now, state)) }
    func report(_ event: NodeEvent) { node.reports.append((lan.now, event)) }
    func log(_ topic: PartyRadioCore.Log.Topic, _ message: String) {}
    func webReply(ticket: UInt64, _ reply: WebReply) {}
}

/// The whole simulated LAN: hosts, a network with loss, duplication, delay and reordering,
/// DNS-SD, and one queue of events in true time. Deterministic for a seed.
final class SimLAN {
    /// A private station's seal, which every node of a private run holds (nil: a public run).
    var seal: (any StationSeal)?
    /// Datagrams a node of a private run sent in clear (must stay 0: everything goes sealed).
    private(set) var clearSends = 0

    enum Action {
        case input(Int, NodeInput)
        case timer(Int, generation: Int)
        case crash(Int)
        case hook(Int)
        /// The node's load plan is due (``LoadPlan/nextWakeup(player:)``), as the runtime steps
        /// the player driver.
        case player(Int, generation: Int)
    }

    struct Event {
        var time: Int64
        var order: Int
        var action: Action
    }

    private(set) var now: Int64 = 0
    let seed: UInt64
    var random: SimRandom
    let faults: SimFaults
    private(set) var nodes: [SimNode] = []
    private var queue: [Event] = []
    private var order = 0
    private var byAddress: [PeerAddress: Int] = [:]
    /// Published services: name → (node, port, TXT).
    private var services: [(name: String, node: Int, port: UInt16, txt: [String])] = []
    /// Called after a node handled an input (or a batch of datagrams), with the effects it returned.
    var observer: ((SimNode, [Effect]) -> Void)?
    /// Called before a datagram is handed to a node.
    var datagramObserver: ((SimNode, Arrival) -> Void)?
    /// Called by `.hook` events (periodic checks).
    var hooks: [Int: () -> Void] = [:]
    /// Set when the run stopped because time stood still (a machine that never lets its timer go).
    private(set) var stall: String?
    private(set) var delivered = 0
    private(set) var handled = 0
    private(set) var batched = 0

    init(seed: UInt64, faults: SimFaults) {
        self.seed = seed
        random = SimRandom(seed: seed)
        self.faults = faults
    }

    @discardableResult
    /// A DJ at 10.9.0.1:40000 on `sim0` playing `queue` (its clock `offsetNs` and `driftPPM` off),
    /// started at `startNs` of true time.
    func addDJ(
        name: String, advert: StationAdvert, queue: [Track], crowdSkipPercent: Int, verifier: any DatagramVerifier,
        key: PublicKey, startNs: Int64, offsetNs: Int64 = 0, driftPPM: Double = 0,
        voteWeightAfterNs: Int64 = DJMachine.defaultVoteWeightAfterNs, live: LiveSender.Settings? = nil
    ) -> SimNode {
        let dj = add(
            name: "dj",
            machine: .dj(
                DJMachine(
                    configuration: .init(
                        name: name, advert: advert, queue: queue, port: 40_000, interfaceName: "sim0",
                        address: "10.9.0.1", playsAudio: true, crowdSkipPercent: crowdSkipPercent,
                        voteWeightAfterNs: voteWeightAfterNs, live: live),
                    verifier: verifier, now: LocalTime(ns: startNs + offsetNs),
                    erasureCode: live == nil ? nil : XORCode())),
            key: key, offsetNs: offsetNs, driftPPM: driftPPM)
        return dj
    }

    /// A host running `machine` on the real driver and outbox, signing with `key` (a keyed
    /// checksum), holding the run's seal if it is private.
    func add(name: String, machine: SimMachine, key: PublicKey, offsetNs: Int64, driftPPM: Double) -> SimNode {
        let node = SimNode(
            index: nodes.count, name: name, key: key, offsetNs: offsetNs, driftPPM: driftPPM,
            cacheSeed: seed &+ UInt64(nodes.count))
        if case .listener = machine { node.plan = LoadPlan(configuration: .init(hasCache: true)) }
        let outbox = Outbox(
            signer: node.signer, seal: seal,
            sessionSigner: { stationKey in ChecksumSessionSigner(publicKey: key, stationKey: stationKey) })
        node.driver = NodeDriver(machine: machine, outbox: outbox, ports: SimPorts(lan: self, node: node))
        node.driver.afterStep = { [unowned self, unowned node] _, effects, _ in observer?(node, effects) }
        nodes.append(node)
        byAddress[node.address] = node.index
        return node
    }

    func schedule(at time: Int64, _ action: Action) {
        order += 1
        let event = Event(time: time, order: order, action: action)
        // A binary heap on (time, order): equal times run in the order scheduled.
        queue.append(event)
        var child = queue.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(queue[child], queue[parent]) else { break }
            queue.swapAt(child, parent)
            child = parent
        }
    }

    private static func before(_ a: Event, _ b: Event) -> Bool { (a.time, a.order) < (b.time, b.order) }

    private func pop() -> Event? {
        guard !queue.isEmpty else { return nil }
        let top = queue[0]
        let last = queue.removeLast()
        if !queue.isEmpty {
            queue[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < queue.count && Self.before(queue[left], queue[smallest]) { smallest = left }
                if right < queue.count && Self.before(queue[right], queue[smallest]) { smallest = right }
                if smallest == parent { break }
                queue.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }

    /// Runs every event up to true time `end`.
    func run(until end: Int64) {
        var sameInstant = 0
        while let next = queue.first, next.time <= end {
            _ = pop()
            // A machine that keeps asking to be woken at the instant it was woken would spin forever.
            sameInstant = next.time == now ? sameInstant + 1 : 0
            if sameInstant > 10_000 {
                stall = "10000 events at one instant; the last: \(next.action)"
                return
            }
            now = next.time
            switch next.action {
            case .input(let index, .datagram(let bytes, let from, let machine)):
                let first = Arrival(bytes: bytes, from: from, at: nodes[index].local(now), machine: machine)
                step(nodes[index], arrivals: [first] + moreDatagrams(to: index))
            case .input(let index, .start): step(nodes[index])
            case .input(let index, let input): step(nodes[index], inputs: [input])
            case .timer(let index, let generation):
                if nodes[index].timerGeneration == generation { step(nodes[index]) }
            case .crash(let index):
                nodes[index].alive = false
                nodes[index].crashedAt = now
            case .hook(let id): hooks[id]?()
            case .player(let index, let generation):
                let node = nodes[index]
                guard node.playerGeneration == generation, node.alive, !node.machine.isFinished else { break }
                stepPlan(node)
            }
        }
        now = end
    }

    /// The rest of one wake-up's datagrams, as a node's runtime drains its sockets after `poll`: the
    /// datagrams to the node next in line, within a millisecond of the first (`now`), up to 63 more,
    /// each stamped with the node's clock as it arrived. Taken off the queue here; `now` moves to
    /// the last of them. The driver batches them as it batches a real node's.
    private func moreDatagrams(to index: Int) -> [Arrival] {
        var more: [Arrival] = []
        let first = now
        while more.count < 63, let next = queue.first, next.time <= first + 1_000_000,
            case .input(index, .datagram(let bytes, let from, let machine)) = next.action
        {
            _ = pop()
            now = next.time
            more.append(Arrival(bytes: bytes, from: from, at: nodes[index].local(next.time), machine: machine))
        }
        return more
    }

    /// One turn of a node's driver, as its runtime takes one after `poll`: the inputs, the
    /// datagrams, the timer if due. A node that is down or has not started yet hears nothing (but
    /// its start); after the turn its timer is set again, or its service withdrawn when it finished.
    private func step(_ node: SimNode, inputs: [NodeInput] = [], arrivals: [Arrival] = []) {
        guard node.alive, !node.machine.isFinished else { return }
        guard node.driver.started || (inputs.isEmpty && arrivals.isEmpty) else { return }
        if !node.driver.started { handled += 1 }
        handled += inputs.count + arrivals.count
        delivered += arrivals.count
        if arrivals.count > 1 { batched += arrivals.count }
        for arrival in arrivals { datagramObserver?(node, arrival) }
        node.driver.step(inputs: inputs, arrivals: arrivals)
        stepPlan(node)
        if node.machine.isFinished {
            node.finishedAt = now
            withdraw(node)
        } else if let wake = node.driver.nextWakeup {
            node.timerGeneration += 1
            schedule(at: max(now, node.trueTime(reaching: wake)), .timer(node.index, generation: node.timerGeneration))
        }
    }

    /// The player as the load plan sees it: always made, settled (corrections every 500 ms).
    static let player = LoadPlan.PlayerState(isPreparing: false, readingIntervalNs: 500_000_000)

    /// One of the machine's player commands through the node's load plan, as the player driver
    /// carries it out: the plan's fetches first, then a load at once if it can.
    fileprivate func drivePlan(_ node: SimNode, _ command: PlayerCommand) {
        let local = node.local(now)
        execute(node.plan.handle(command, view: node.view, now: local), on: node)
        guard case .load = command else { return }
        let wanted = node.plan.wanted(view: node.view, playerMade: true, now: local)
        let cache = wanted.map { node.cache.state(of: $0.track.source, at: now) }
        execute(node.plan.loadNow(view: node.view, cache: cache, player: Self.player, now: local), on: node)
    }

    /// A step of the node's load plan, then its next one scheduled.
    private func stepPlan(_ node: SimNode) {
        let local = node.local(now)
        let wanted = node.plan.wanted(view: node.view, playerMade: true, now: local)
        let cache = wanted.map { node.cache.state(of: $0.track.source, at: now) }
        execute(node.plan.step(view: node.view, cache: cache, player: Self.player, now: local), on: node)
        node.playerGeneration += 1
        if let wake = node.plan.nextWakeup(player: Self.player) {
            schedule(
                at: max(now, node.trueTime(reaching: wake)),
                .player(node.index, generation: node.playerGeneration))
        }
    }

    private func execute(_ commands: [LoadPlan.Command], on node: SimNode) {
        for command in commands {
            switch command {
            case .fetch(let url, let first):
                node.fetches.append((now, url, first))
                node.cache.request(url, at: now)
            case .load(let track, let from, _):
                node.loads.append((now, track.id, track.source, from))
            case .pause, .resume, .stop, .correct, .releasePages:
                break
            }
        }
    }

    /// A datagram `node`'s driver made, into the network: to one peer, or to every node on the link
    /// that joined the group.
    /// Puts `bytes` on the network as `node` sending them (tests inject forged or replayed datagrams so).
    func send(_ bytes: [UInt8], from node: SimNode, to destination: Destination) {
        if seal != nil && !SealedDatagram.isSealed(bytes) { clearSends += 1 }
        switch destination {
        case .peer(let peer):
            if let index = byAddress[peer] { transmit(bytes, from: node, to: nodes[index]) }
        case .group(let group):
            for other in nodes where other !== node && other.groups.contains(group) && !other.offLink {
                transmit(bytes, from: node, to: other)
            }
        }
    }

    /// DNS-SD: a service goes up a second later, and every browser hears of it.
    fileprivate func publish(name: String, port: UInt16, txt: [String], by node: SimNode) {
        services.append((name, node.index, port, txt))
        schedule(at: now + 1_000_000_000, .input(node.index, .discovery(.published(name: name))))
        for browser in nodes where browser.browsing {
            announce(services.count - 1, to: browser, after: 1_000_000_000)
        }
    }

    fileprivate func browse(by node: SimNode) {
        node.browsing = true
        for service in services.indices { announce(service, to: node, after: 5_000_000) }
        schedule(at: now + 150_000_000, .input(node.index, .discovery(.allForNow)))
    }

    private func announce(_ service: Int, to browser: SimNode, after delay: Int64) {
        let s = services[service]
        let host = nodes[s.node].address.host
        schedule(at: now + delay, .input(browser.index, .discovery(.discovered(name: s.name))))
        schedule(
            at: now + delay + 5_000_000,
            .input(browser.index, .discovery(.resolved(name: s.name, address: host, port: s.port, txt: s.txt))))
    }

    /// A DJ that finished withdraws its service (a crashed one leaves it behind, as mDNS caches do).
    private func withdraw(_ node: SimNode) {
        let mine = services.filter { $0.node == node.index }
        services.removeAll { $0.node == node.index }
        for service in mine {
            for browser in nodes where browser.browsing {
                schedule(at: now + 20_000_000, .input(browser.index, .discovery(.removed(name: service.name))))
            }
        }
    }

    private func transmit(_ bytes: [UInt8], from: SimNode, to: SimNode) {
        let copies = random.chance(faults.duplicate) ? 2 : 1
        to.duplicatesIn += copies - 1
        for _ in 0..<copies {
            if random.chance(faults.loss) { continue }
            var delay = faults.minDelayNs + Int64(random.unit() * Double(faults.maxDelayNs - faults.minDelayNs))
            if random.chance(faults.spike) { delay += Int64(random.double(20e6...200e6)) }
            schedule(at: now + delay, .input(to.index, .datagram(bytes, from: from.address, machine: from.machineID)))
        }
    }
}
