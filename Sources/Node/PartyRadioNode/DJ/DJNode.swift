import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// How a DJ is started (`partyradio dj`).
public struct DJConfiguration: Sendable {
    public var name: StationName
    /// Folders of music to queue; empty: a generated demo library in the state directory.
    public var libraries: [String]
    /// Tracks queued besides the library (catalog tracks), in order.
    public var extraTracks: [Track]
    /// UDP port for listeners' unicast traffic and the SRV record; 0 lets the kernel pick.
    public var port: UInt16
    public var playback: PlaybackOptions
    /// Where `search` and `add` controls look; nil: they say the catalog is not available.
    public var catalog: (any TrackCatalog)?

    public init(
        name: StationName, libraries: [String] = [], extraTracks: [Track] = [], port: UInt16 = 0,
        playback: PlaybackOptions = PlaybackOptions(), catalog: (any TrackCatalog)? = nil
    ) {
        self.catalog = catalog
        self.name = name
        self.libraries = libraries
        self.extraTracks = extraTracks
        self.port = port
        self.playback = playback
    }
}

/// The DJ: hosts the station, announces it through Avahi, multicasts state, counts listeners and votes.
///
/// Runs on the calling thread in ``run()``; everything from other threads arrives through ``inbox``.
public final class DJNode: @unchecked Sendable {
    public let inbox: Inbox<NodeInput>
    private let settings: NodeSettings
    private let clock: NodeClock
    private var reporter: any NodeReporter { settings.reporter }
    private var engine: StationEngine
    private let transport: Transport
    private let avahi: AvahiSession
    private let interface: NetworkInterface
    private let groupAddress: SocketAddress
    private let advert: StationAdvert
    private var lastSnapshotNs: Int64 = 0
    private var lastExpiryNs: Int64 = 0
    private var running = true
    /// Who queried or listened lately (address → last heard), to unicast the goodbye to observers
    /// that do not join the group.
    private var recentPeers: [SocketAddress: Int64] = [:]
    private let library: LocalLibrary?
    private let playback: PlaybackSession
    private let catalog: (any TrackCatalog)?
    private var exitError: NodeError?

    /// A snapshot goes to the group at least this often (PRODUCT.md: at least once a second;
    /// twice a second lets observers declare a station gone after 2.5 s of silence).
    public static let snapshotIntervalNs = Nanos.ms(500)

    public init(configuration: DJConfiguration, settings: NodeSettings, inbox: Inbox<NodeInput> = Inbox())
        throws(NodeError)
    {
        self.settings = settings
        self.inbox = inbox
        catalog = configuration.catalog
        clock = settings.clock
        interface = try settings.chooseInterface()
        let identity = try settings.identity("station")
        let stationID = identity.stationID
        let socket = try settings.unicastSocket(interface: interface, port: configuration.port)
        transport = settings.transport(socket: socket, identity: identity, stationID: stationID)
        let group = stationID.multicastGroup
        groupAddress = SocketAddress(group.addressString, port: group.port)!
        advert = StationAdvert(stationID: stationID, group: group, publicKey: identity.publicKey)
        // Catalog tracks alone need no library; otherwise the folders (or the demo library) are served.
        if configuration.libraries.isEmpty && !configuration.extraTracks.isEmpty {
            library = nil
        } else {
            library = try LocalLibrary(
                folders: configuration.libraries, stateDirectory: settings.stateDirectory, address: interface.address.host)
        }
        for warning in library?.warnings ?? [] { settings.reporter.report(.warning(warning)) }
        let queue = (library?.tracks ?? []) + configuration.extraTracks
        engine = StationEngine(name: configuration.name.value, queue: queue, now: clock.now())
        playback = try PlaybackSession(role: "dj", options: configuration.playback, clock: clock, inbox: inbox)
        avahi = try settings.avahi(interface: interface, inbox: inbox)
        let port: UInt16
        do { port = try socket.localAddress().port } catch { throw NodeError("Cannot read the DJ's UDP port: \(error).") }
        do {
            try avahi.publish(name: configuration.name.value, type: StationAdvert.serviceType, port: port, txt: advert.txtRecord)
        } catch { throw NodeError(error.description) }
        reporter.report(
            .stationStarted(
                name: configuration.name.value, id: stationID, interface: interface.name, address: interface.address.host,
                port: port, group: group, fingerprint: identity.publicKey.fingerprint, queueLength: queue.count))
    }

    /// Runs until `quit` (a command, a signal or a fatal Avahi failure); says goodbye on the way out.
    public func run() throws(NodeError) {
        let now = clock.now()
        broadcastSnapshot(now: now, change: .track)
        while running {
            let untilSnapshot = (lastSnapshotNs + Self.snapshotIntervalNs - clock.now()) / Nanos.perMillisecond
            _ = waitReadable([inbox.wakeDescriptor, transport.socket.descriptor], timeoutMs: Int32(max(1, min(20, untilSnapshot))))
            step()
        }
        goOffAir()
        if let exitError { throw exitError }
    }

    private func step() {
        for input in inbox.drain() {
            switch input {
            case .command(let line): perform(line)
            case .quit: running = false
            case .playerError(let message):
                reporter.report(.warning("The player could not play the track (\(message)); retrying."))
                playback.playerFailed()
            case .catalogResults(let term, let tracks):
                reporter.report(.searchResults(term: term, tracks: tracks))
            case .catalogQueue(let tracks, let failure):
                if let failure { reporter.report(.warning(failure)) }
                let now = clock.now()
                if engine.enqueue(tracks, now: now) {
                    reporter.report(.queued(tracks: tracks, queueLength: engine.queue.count))
                    broadcastSnapshot(now: now, change: engine.queue.count == tracks.count ? .track : .queue)
                }
            case .avahi(let box): handle(box.event)
            }
        }
        let now = clock.now()
        for received in transport.receiveAll(policy: .listenersOf(advert.stationID), clock: clock) {
            handle(received, now: now)
        }
        if engine.tick(now: now) { broadcastSnapshot(now: now, change: .track) }
        if now - lastExpiryNs > Nanos.ms(250) {
            lastExpiryNs = now
            if engine.expireListeners(now: now) {
                reporter.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true))
                broadcastSnapshot(now: now, change: .listeners)
            }
        }
        if now - lastSnapshotNs >= Self.snapshotIntervalNs { broadcastSnapshot(now: now, change: .progress) }
        playback.step()
    }

    /// One control command: `next`, `prev`, `pause`, `resume`, `toggle`, `quit`.
    private func perform(_ line: String) {
        let now = clock.now()
        let words = line.trimmingWhitespace().split(separator: " ", maxSplits: 1).map(String.init)
        guard let verb = words.first?.lowercased() else { return }
        switch verb {
        case "next", "n", "skip":
            if engine.next(now: now) { broadcastSnapshot(now: now, change: .track) }
        case "prev", "previous", "p", "back":
            if engine.previous(now: now) { broadcastSnapshot(now: now, change: .track) }
        case "pause":
            if engine.pause(now: now) { broadcastSnapshot(now: now, change: .paused) }
        case "resume", "play":
            if engine.resume(now: now) { broadcastSnapshot(now: now, change: .resumed) }
        case "toggle", " ":
            perform(engine.isPaused ? "resume" : "pause")
        case "seek":
            guard words.count == 2, let seconds = Double(words[1]), seconds.isFinite else {
                reporter.report(.warning("'seek' takes a position in seconds, e.g. 'seek 42'."))
                return
            }
            if engine.seek(toNs: Nanos.seconds(seconds), now: now) { broadcastSnapshot(now: now, change: .seek) }
        case "search":
            guard words.count == 2 else { return reporter.report(.warning("'search' takes a term, e.g. 'search daft punk'.")) }
            askCatalog { catalog in
                let term = words[1]
                do { return .catalogResults(term: term, tracks: try await catalog.search(term)) } catch {
                    return .catalogQueue(tracks: [], failure: "The search for '\(term)' failed: \(error)")
                }
            }
        case "add":
            let ids = words.count == 2 ? words[1].split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) : []
            guard !ids.isEmpty else { return reporter.report(.warning("'add' takes catalog track IDs, e.g. 'add 1440857781'.")) }
            askCatalog { catalog in
                do {
                    let tracks = try await catalog.lookup(ids)
                    let missing = ids.filter { id in !tracks.contains { $0.id == id } }
                    return .catalogQueue(
                        tracks: tracks,
                        failure: missing.isEmpty ? nil : "No playable track for ID \(missing.joined(separator: ", ")).")
                } catch {
                    return .catalogQueue(tracks: [], failure: "Adding \(ids.joined(separator: ", ")) failed: \(error)")
                }
            }
        case "quit", "q", "exit":
            running = false
        default:
            reporter.report(
                .warning("Unknown command '\(verb)'; use next, prev, pause, resume, seek SECONDS, search TERM, add ID or quit."))
        }
    }

    /// Runs a catalog request off the loop; its answer comes back through the inbox.
    private func askCatalog(_ request: @escaping @Sendable (any TrackCatalog) async -> NodeInput) {
        guard let catalog else {
            reporter.report(.warning("The catalog is not available to this DJ."))
            return
        }
        let inbox = self.inbox
        Task { inbox.push(await request(catalog)) }
    }

    private func handle(_ event: AvahiEvent) {
        switch event {
        case .renamed(let from, let to):
            engine.rename(to)
            reporter.report(.stationRenamed(from: from, to: to))
            broadcastSnapshot(now: clock.now(), change: .progress)
        case .published(let name):
            reporter.report(.stationPublished(name: name))
        case .failed(let message):
            exitError = NodeError(message)
            running = false
        case .discovered, .resolved, .unresolved, .removed, .allForNow:
            break
        }
    }

    private func handle(_ received: Received, now: Int64) {
        let sender = received.sender
        if recentPeers.count > 1024 { recentPeers = recentPeers.filter { now - $0.value < Nanos.seconds(5) } }
        recentPeers[received.from] = now
        switch received.message {
        case .hello(let hello):
            let isNew = engine.hello(from: sender, name: hello.listenerName, now: now)
            transport.send(.stateSnapshot(engine.snapshot(now: clock.now())), to: received.from)
            if isNew { listenerJoined(hello.listenerName.isEmpty ? sender.fingerprint : hello.listenerName, now: now) }
        case .heartbeat:
            if engine.heartbeat(from: sender, now: now) { listenerJoined(sender.fingerprint, now: now) }
        case .leave:
            if engine.leave(from: sender) {
                reporter.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true))
                broadcastSnapshot(now: now, change: .listeners)
            }
        case .query:
            transport.send(.stateSnapshot(engine.snapshot(now: clock.now())), to: received.from)
        case .vote(let vote):
            let before = engine.votes.tally
            let ack = engine.vote(
                from: sender, trackID: vote.trackID, choice: vote.choice, sequence: received.datagram.header.sequence)
            transport.send(.voteAck(ack), to: received.from)
            if ack.status == .counted && ack.tally != before {
                reporter.report(.voteCounted(trackID: ack.trackID, choice: vote.choice, tally: ack.tally, voter: sender.fingerprint))
                broadcastSnapshot(now: now, change: .votes)
            }
        case .timePing(let ping):
            // t2 is when the datagram came off the socket; t3 is stamped as late as possible.
            transport.send(
                .timePong(TimePong(clientSendNs: ping.clientSendNs, serverReceiveNs: received.receivedAtNs,
                                   serverSendNs: clock.now())), to: received.from)
        case .stateSnapshot, .voteAck, .goodbye, .timePong:
            break  // DJ kinds never pass the listener policy
        }
    }

    private func listenerJoined(_ name: String, now: Int64) {
        reporter.report(.listenersChanged(count: engine.roster.count, joined: name, left: false))
        broadcastSnapshot(now: now, change: .listeners)
    }

    private func broadcastSnapshot(now: Int64, change: NodeEvent.StateChange) {
        let snapshot = engine.snapshot(now: now)
        transport.send(.stateSnapshot(snapshot), to: groupAddress)
        lastSnapshotNs = now
        playback.follow(snapshot)
        reporter.report(.state(snapshot, positionNs: engine.positionNs(at: now), change: change))
    }

    /// Goodbye to the group (three times, against loss) and to every peer heard in the last
    /// seconds (observers query by unicast and do not join the group), then withdraw from DNS-SD.
    private func goOffAir() {
        let goodbye = Message.goodbye(Goodbye(reason: "The DJ ended the station."))
        for _ in 0..<3 { transport.send(goodbye, to: groupAddress) }
        let now = clock.now()
        for (peer, lastHeard) in recentPeers where now - lastHeard < Nanos.seconds(5) {
            transport.send(goodbye, to: peer)
        }
        avahi.close()
        playback.shutdown()
        library?.server.stop()
        reporter.report(.stationStopped(name: engine.name, dropped: transport.drops))
    }

    /// Drops counted so far, by reason.
    public var drops: DropCounters { transport.drops }
}
