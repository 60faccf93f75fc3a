import PartyRadioCore
import PartyRadioLive
import PartyRadioNet
import Synchronization

/// The node's ports on real I/O (``NodePorts``): its unicast and group sockets, Avahi and unicast
/// DNS-SD, the player, the catalog (as tasks whose answers come back through the inbox), the DJ's
/// store, the known stations' keys and the reporter. ``NodeDriver`` hands it every effect;
/// ``NodeRuntime`` polls its descriptors. Owned by the node's thread.
final class NodeIO: NodePorts {
    let inbox: Inbox<NodeInput>
    let interface: NetworkInterface
    private let clock: NodeClock
    private let reporter: any NodeReporter
    private let transport: Transport
    private let avahi: AvahiSession
    /// The group sockets once joined: one per family the node speaks.
    private var groupSockets: [UDPSocket] = []
    let player: PlayerDriver?
    private let catalog: (any TrackCatalog)?
    let recorder: DJRecorder?
    /// Where a listener remembers stations' keys.
    private let knownStations: KnownStations?
    /// A speaker's kept settings (``Effect/keepSpeaker(_:)``); nil on every other node.
    var speakerStore: SpeakerStore?
    /// `--domain`: browsed besides mDNS once the machine browses.
    private let domain: DomainSettings?
    private var domainBrowser: DomainBrowser?
    /// Work done every so often besides the machine's (unicast DNS-SD), fired by the runtime.
    private var periodic: [(schedule: Periodic, fire: () -> Void)] = []
    /// Where ``Effect/webReply(ticket:_:)`` answers go (the DJ's web page).
    var webReply: ((UInt64, WebReply) -> Void)?
    /// The DJ's: each datagram's sender's machine is looked up here (``Arrival/machine``).
    var neighbours: NeighbourTable?
    /// How this node plays a live station; nil: it does not (`--no-audio`, a DJ of files). Its
    /// delay is set from the station's frames: theirs plus ``liveExtraNs``.
    var liveOptions: LivePlayer.Options?
    /// What this listener adds to the station's delay (`listen --latency-extra`); 0 on the DJ.
    var liveExtraNs: Int64 = 0
    /// A speaker's delay trim (``PlayerCommand/delayTrim(_:)``): added to the live output's delay,
    /// which is made again at the next frame when it changes.
    private var liveTrimNs: Int64 = 0
    /// The node's volume (``PlayerCommand/volume(_:)``), which the live output plays at too.
    private var liveVolume = 100
    /// The drift the last live output learnt (ppm), which the next one starts from: it plays to the
    /// same sound card (``LivePlayer/Options/startPPM``). Read from ``liveDriftStore`` for the first.
    private var liveLearntPPM: Double?
    /// Where the learnt drift is kept across runs (the node's state directory); nil: not kept.
    var liveDriftStore: LiveDriftStore?
    /// What was last written there, and since when the live output plays.
    private var liveDriftSaved: Double?
    private var liveOutputSince: LocalTime?
    /// Whether the live status is reported every 5 s already.
    private var reportsLive = false
    /// Since when the live output is lost (its sound server went away), and when it was last tried.
    private var liveOutputLost = false
    private var liveRetriedAt: LocalTime?
    /// When the machine was last told the live output's sync error (``OutputReport``).
    private var liveSyncToldAt: LocalTime?
    /// A live listener's counters from its machine, for `live_status` (set by the listener).
    var liveNetwork: (() -> LiveListenerNetwork)?
    /// What a live DJ sent so far, for `live_sent` (set by a live DJ); nil from it: not live.
    var liveSent: (() -> LiveSent?)? {
        didSet { if oldValue == nil, liveSent != nil { every(Nanos.seconds(5)) { [weak self] in self?.reportSent() } } }
    }
    /// Whether the live station is this node's own (the DJ's speakers): played by its own clock.
    var liveOnTheDJ = false
    /// Where a live DJ's calls to the player it follows go (``MPRISFollower/call(_:)``, which hands
    /// them to its own thread); nil: no player is followed.
    var onPlayerCall: ((LivePlayerCall) -> Void)?
    /// The live output, from the station's first frame on.
    private var live: LiveOutput?
    /// The node's latest estimate of the DJ clock, for a live output made later.
    private var lastEstimate: ClockEstimate?

    init(
        settings: NodeSettings, interface: NetworkInterface, transport: Transport, player: PlayerDriver?,
        catalog: (any TrackCatalog)?, recorder: DJRecorder?, knownStations: KnownStations?, avahi: AvahiSession?,
        inbox: Inbox<NodeInput>
    ) throws(NodeError) {
        self.knownStations = knownStations
        domain = settings.domain
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
        } else {
            do {
                self.avahi = try AvahiSession(interfaceIndex: interface.index, families: interface.families) {
                    event in inbox.push(.discovery(DiscoveryEvent(event)))
                }
            } catch { throw NodeError(.discovery, error.description, cause: error) }
        }
        // The trace shows a live station's output as its audio thread last measured it, whichever
        // output plays now (they are made again when the delay changes or the output fails).
        player?.liveReading = { [weak self] in
            guard let counters = self?.live?.player.counters, counters.placements > 0 else { return nil }
            return counters
        }
    }

    /// What the reactor polls: the inbox's pipe, the unicast sockets and the group sockets.
    var descriptors: [Int32] {
        [inbox.wakeDescriptor] + transport.sockets.sockets.map(\.descriptor) + groupSockets.map(\.descriptor)
    }

    /// What waits on every socket, each datagram stamped as it came off its socket (and, on the DJ,
    /// with its sender's machine).
    func drain() -> [Arrival] {
        var arrived = transport.sockets.sockets.flatMap { socket in
            Transport.drain(socket, clock: clock).map { Arrival(bytes: $0.bytes, from: $0.from, at: $0.at) }
        }
        for socket in groupSockets {
            let family: AddressFamily = socket.family == .ipv4 ? .ipv4 : .ipv6
            arrived += Transport.drain(socket, clock: clock).map {
                Arrival(bytes: $0.bytes, from: $0.from, at: $0.at, group: family)
            }
        }
        if let neighbours {
            for index in arrived.indices {
                let counted = MachineID.isCountedPerMachine(arrived[index].bytes)
                let (machine, probe) = neighbours.lookUp(arrived[index].from.host, probing: counted)
                arrived[index].machine = machine
                // An empty datagram back: the kernel resolves the sender's link-layer address to send
                // it, so the guest's retry finds its machine known (docs/PROTOCOL.md, "One machine").
                if probe, let address = SocketAddress(peer: arrived[index].from) { transport.send([], to: [address]) }
            }
        }
        return arrived
    }

    /// Withdraws from DNS-SD, stops the player, closes the group sockets, ends the DJ's session.
    func close() {
        recorder?.end(at: clock.now())
        avahi.close()
        domainBrowser?.stop()
        player?.shutdown()
        reportSent()
        if live != nil {
            reportLive()
            live?.player.stop()
            live = nil
        }
        for socket in groupSockets { socket.close() }
    }

    // MARK: Timers

    /// Calls `fire` on the node's thread every `periodNs` from now on, between the machine's steps.
    func every(_ periodNs: Int64, _ fire: @escaping () -> Void) {
        periodic.append((Periodic(every: periodNs, from: clock.now()), fire))
    }

    /// When the next of ``every(_:_:)``'s turns is due.
    var nextTimer: LocalTime? { periodic.map(\.schedule.next).min() }

    /// Fires what is due at `now`.
    func fireTimers(at now: LocalTime) {
        for index in periodic.indices where periodic[index].schedule.fire(at: now) { periodic[index].fire() }
    }

    // MARK: Clock

    func now() -> LocalTime { clock.now() }
    func realTimeNs() -> Int64 { NodeClock.realTimeNs() }

    // MARK: Datagrams

    func send(_ datagram: [UInt8], to destination: Destination) {
        let addresses = socketAddresses(destination)
        if addresses.isEmpty {
            Log.debug(.wire, "cannot send to \(destination): not an address this node can reach")
        }
        // A group datagram goes to each family's group: the same bytes, so a listener that hears
        // both drops the twin (``GroupTwins``).
        transport.send(datagram, to: addresses)
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
    func joinGroup(_ group: MulticastGroup) throws(NodeError) -> [AddressFamily] {
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
            throw NodeError(
                .network, "Cannot join the station's multicast group \(shown): \(failure.error); check --interface.",
                cause: failure.error)
        }
        return groupSockets.map { $0.family == .ipv4 ? .ipv4 : .ipv6 }
    }

    // MARK: Discovery

    func publish(name: String, port: UInt16, txt: [String]) {
        do { try avahi.publish(name: name, type: StationAdvert.serviceType, port: port, txt: txt) } catch {
            inbox.push(.discovery(.failed(error.description)))
        }
    }

    func browse(resolving name: String?) {
        do { try avahi.browse(type: StationAdvert.serviceType) } catch {
            inbox.push(.discovery(.failed(error.description)))
        }
        if let name { avahi.resolveStation(named: name, interface: interface, inbox: inbox) }
        if let domain, domainBrowser == nil {
            do {
                let browser = try DomainBrowser(
                    settings: domain, families: interface.families, inbox: inbox, reporter: reporter)
                domainBrowser = browser
                every(Int64(DomainBrowser.intervalSeconds) * Nanos.perSecond) { browser.sweepSoon() }
            } catch {
                inbox.push(.discovery(.failed(error.description)))
            }
        }
    }

    // MARK: Player

    func drivePlayer(_ command: PlayerCommand) {
        if case .delayTrim(let ns) = command { liveTrimNs = ns }
        if case .volume(let level) = command {
            liveVolume = level
            live?.player.setVolume(level)
        }
        player?.execute(command, now: now())
    }
    /// Keeps what an output about to be stopped learnt of its sound card's drift, once it played.
    private func keepLearntDrift(of player: LivePlayer) {
        let counters = player.counters
        if counters.placements > 0 { liveLearntPPM = counters.learntPPM }
    }

    /// The drift a new live output starts from: the last output's in this run, else the one kept
    /// for the same output, else 0.
    private func startingDrift(for options: LivePlayer.Options) -> Double {
        if let liveLearntPPM { return liveLearntPPM }
        let kept = liveDriftStore?.load(output: LiveDriftStore.output(of: options))
        liveLearntPPM = kept ?? 0
        return kept ?? 0
    }

    /// Writes the drift the playing output learnt to the store, once it has played 10 s (what
    /// the controller knows before is still mostly the start it was given) and when it moved by a
    /// ppm or more since the last write.
    private func saveLearntDrift() {
        guard let store = liveDriftStore, let live, let since = liveOutputSince, now() - since >= Nanos.seconds(10)
        else { return }
        let counters = live.player.counters
        guard counters.placements > 0, abs(counters.learntPPM - (liveDriftSaved ?? .infinity)) >= 1 else { return }
        do {
            try store.save(output: LiveDriftStore.output(of: live.player.options), ppm: counters.learntPPM)
            liveDriftSaved = counters.learntPPM
        } catch {
            Log.debug(.player, "the live output's drift could not be kept in \(store.url.path): \(error)")
        }
    }

    func follow(_ view: StationClockView) {
        player?.follow(view)
        lastEstimate = view.estimate
        live?.follow(view.estimate)
    }

    func live(_ input: LiveReceived) {
        // The station's delay comes with every frame: a player is made for it at the first, and
        // made again when the station's changes (a DJ restarted with another --latency).
        if case .frame(let frame) = input, let current = live,
            current.player.options.delayNs != frame.delayNs + liveExtraNs + liveTrimNs
        {
            reporter.report(.warning("the live station's delay is now \(frame.delayMs) ms"))
            reportLive()
            keepLearntDrift(of: current.player)
            current.player.stop()
            live = nil
        }
        // An output that failed while it played (its sound server went away, restarted): made again,
        // once a second, until the server answers.
        if case .frame = input, let current = live, let failure = current.player.failure {
            if !liveOutputLost {
                liveOutputLost = true
                reporter.report(.warning("the live output stopped (\(failure)); trying again every second"))
                inbox.push(.output(.failed("the live output stopped (\(failure))")))
            }
            let at = now()
            if let last = liveRetriedAt, at - last < Nanos.seconds(1) { return }
            liveRetriedAt = at
            keepLearntDrift(of: current.player)
            current.player.stop()
            live = nil
        }
        if live == nil, case .frame(let frame) = input, var options = liveOptions {
            options.delayNs = frame.delayNs + liveExtraNs + liveTrimNs
            options.bufferNs = LivePlayer.Options.bufferNs(delayNs: options.delayNs, frame: frame.duration)
            options.startPPM = startingDrift(for: options)
            let output = LiveOutput(options: options, clock: clock, onTheDJ: liveOnTheDJ)
            if liveVolume != 100 { output.player.setVolume(liveVolume) }
            if let failure = output.start() {
                guard !liveOutputLost else { return }  // tried again at the next second
                reporter.report(.warning("cannot play the live station: \(failure)"))
                inbox.push(.output(.failed("cannot play the live station: \(failure)")))
                liveOptions = nil  // said once
                return
            }
            if liveOutputLost {
                liveOutputLost = false
                reporter.report(.notice("The live output plays again."))
                inbox.push(.output(.recovered))
            }
            output.follow(lastEstimate)
            live = output
            liveOutputSince = now()
            if !reportsLive {
                reportsLive = true
                every(Nanos.seconds(5)) { [weak self] in self?.reportLive() }
            }
        }
        guard let live else { return }
        switch input {
        case .frame(let frame): live.player.receive(frame)
        case .repair(let repair): live.player.receive(repair)
        }
        // Its sync error to the machine about once a second, once it has placed its sound.
        let at = now()
        if liveSyncToldAt.map({ at - $0 >= Nanos.seconds(1) }) ?? true {
            let counters = live.player.counters
            if counters.placements > 0 {
                liveSyncToldAt = at
                inbox.push(.output(.syncError(counters.lastErrorNs)))
            }
        }
    }

    func callPlayer(_ call: LivePlayerCall) {
        guard let onPlayerCall else { return Log.debug(.node, "no player followed to call \(call.member) on") }
        onPlayerCall(call)
    }

    /// Says what the live output did so far.
    func reportLive() {
        guard let live else { return }
        saveLearntDrift()
        let counters = live.player.counters
        reporter.report(
            .liveStatus(
                LiveStatus(
                    counters: counters.buffer, placements: counters.placements, skipped: counters.skipped,
                    errorUs: counters.lastErrorNs / 1000, ppm: counters.ppm,
                    network: liveNetwork?() ?? LiveListenerNetwork(), realTime: counters.realTime)))
    }

    /// Says what the live DJ sent so far.
    func reportSent() {
        if let sent = liveSent?() { reporter.report(.liveSent(sent)) }
    }

    // MARK: Catalog

    /// Runs a catalog request as a task; its answer comes back through the inbox.
    func ask(_ request: CatalogRequest) {
        let inbox = self.inbox
        guard let catalog else {
            if case .requestedTrack(_, let ticket) = request {
                return inbox.push(
                    .catalog(.requestedTrack(nil, failure: "The catalog is not available to this DJ.", for: ticket)))
            }
            if case .webSearch(let term, let ticket) = request {
                return inbox.push(.catalog(.webResults(term: term, tracks: [], status: .unavailable, ticket: ticket)))
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
            case .webSearch(let term, let ticket):
                // The guest's page waits: a catalog slower than the timeout answers "failed".
                let first = FirstAnswer()
                let answer = { @Sendable (tracks: [Track], status: CatalogStatus) in
                    guard first.claim() else { return }
                    inbox.push(.catalog(.webResults(term: term, tracks: tracks, status: status, ticket: ticket)))
                }
                let timeout = Task {
                    try? await Task.sleep(for: .nanoseconds(CatalogRequest.webSearchTimeoutNs))
                    answer([], .failed("no answer in time"))
                }
                do { answer(try await catalog.search(term), .ok) } catch { answer([], .failed("\(error)")) }
                timeout.cancel()
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

    // MARK: Store

    func save(_ station: SavedStation) { recorder?.save(station, at: clock.now()) }
    func record(_ play: PlayRecord) { recorder?.record(play) }

    func keepSpeaker(_ state: SpeakerControlState) {
        do { try speakerStore?.save(state) } catch {
            reporter.report(
                .warning("Could not keep the speaker's settings in \(speakerStore?.url.path ?? ""): \(error)."))
        }
    }

    func pin(name: String, key: PublicKey) {
        do { try knownStations?.pin(name, key: key) } catch {
            reporter.report(
                .warning("Could not remember the key of '\(name)' in \(knownStations?.url.path ?? ""): \(error)."))
        }
    }

    // MARK: Reporter

    func report(_ event: NodeEvent) { reporter.report(event) }
    func log(_ topic: Log.Topic, _ message: String) { Log.debug(topic, message) }

    // MARK: Web

    func webReply(ticket: UInt64, _ reply: WebReply) { webReply?(ticket, reply) }
}

/// Lets one of two racing tasks answer: a web search's catalog answer or its timeout.
private final class FirstAnswer: Sendable {
    private let answered = Mutex(false)

    /// True for the first caller only.
    func claim() -> Bool {
        answered.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
