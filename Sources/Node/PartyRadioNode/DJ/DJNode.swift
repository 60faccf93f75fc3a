import PartyRadioCore
import PartyRadioHTTP
import PartyRadioLive
import PartyRadioMPRIS
import PartyRadioNet
import PartyRadioSecurity
import PartyRadioStorage

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
    /// `--crowd-skip`: the share of the room (percent) whose down votes skip a track; 0: off.
    public var crowdSkipPercent: Int
    /// `--requests`: how guests' requests are taken.
    public var requestMode: RequestMode
    /// `--max-requests`: requests one guest may have waiting at once.
    public var maxRequestsPerGuest: Int
    /// `--voters-per-address`: voter keys counted per machine (``MachineID``).
    public var votersPerAddress: Int
    /// `--vote-weight-after`: how long a machine is present (listening, or its page open) before its
    /// votes weigh toward crowd skip; 0: at once.
    public var voteWeightAfterNs: Int64
    /// `--fresh`: forget the saved station and start from `libraries` and `extraTracks`.
    public var fresh: Bool
    /// `--private`: only guests with the join code can find, hear, vote or chat (the code is kept
    /// in the state directory beside the station key).
    public var isPrivate: Bool
    /// `--new-code`: replace the kept join code with a new one.
    public var newCode: Bool
    /// `--live SOURCE`: a live station broadcasting what the source plays (no library, no player).
    public var live: LiveSource?
    /// `--live-frame-ms`, `--live-bitrate` (and the block the delay allows).
    public var liveSettings: LiveSender.Settings
    /// `--live-default-output`: the station's sink (`--live pulse`) is the default sink while it runs.
    public var liveDefaultOutput = false
    /// `--live-player`: the MPRIS player whose track a live station shows as now playing, and which
    /// skips and pauses move (default: whichever plays).
    public var livePlayer = LivePlayerChoice.playing

    public init(
        name: StationName, libraries: [String] = [], extraTracks: [Track] = [], port: UInt16 = 0,
        playback: PlaybackOptions = PlaybackOptions(), catalog: (any TrackCatalog)? = nil,
        crowdSkipPercent: Int = 50, requestMode: RequestMode = .open, maxRequestsPerGuest: Int = 3,
        votersPerAddress: Int = 1, voteWeightAfterNs: Int64 = DJMachine.defaultVoteWeightAfterNs, fresh: Bool = false,
        isPrivate: Bool = false, newCode: Bool = false, live: LiveSource? = nil,
        liveSettings: LiveSender.Settings = LiveSender.Settings()
    ) {
        self.live = live
        self.liveSettings = liveSettings
        self.voteWeightAfterNs = voteWeightAfterNs
        self.isPrivate = isPrivate
        self.newCode = newCode
        self.votersPerAddress = votersPerAddress
        self.fresh = fresh
        self.crowdSkipPercent = crowdSkipPercent
        self.requestMode = requestMode
        self.maxRequestsPerGuest = maxRequestsPerGuest
        self.catalog = catalog
        self.name = name
        self.libraries = libraries
        self.extraTracks = extraTracks
        self.port = port
        self.playback = playback
    }
}

/// `partyradio dj`: sets up the station's I/O (key, socket, library, player) and runs a
/// ``DJMachine`` on the ``NodeRuntime`` on the calling thread. Other threads reach it through
/// the inbox (controls, signals).
public final class DJNode {
    private let runtime: NodeRuntime<DJMachine>
    private let library: LocalLibrary?
    private let server: MediaServer
    private let hub: WebHub
    /// The desktop's media controls, when there is a session bus.
    private let mpris: MPRISBridge?
    /// `--domain`: the station's records in a unicast DNS-SD domain.
    private let publisher: DomainPublisher?
    private let inbox: Inbox<NodeInput>
    private let reporter: any NodeReporter
    /// Scans the library again on SIGHUP, one scan at a time, off the node's thread (a scan reads
    /// every file's tags); SIGHUPs during a scan make one more scan after it.
    private let rescans = WorkerThread(name: "partyradio.dj.rescan")
    /// A live station's capture thread (`--live`).
    private let capture: LiveCapture?
    /// A live station's frames for listening pages (`GET /api/live`).
    private let liveWeb: LiveWebRelay?
    /// A live station's follower of the player on the session bus (`--live-player`).
    private let follower: MPRISFollower?
    /// The page's origin and token for commands on this machine (`dj-link.json`); nil if not written.
    private let link: DJLink.Written?

    public init(configuration: DJConfiguration, settings: NodeSettings, inbox: Inbox<NodeInput> = Inbox())
        throws(NodeError)
    {
        self.inbox = inbox
        reporter = settings.reporter
        let interface = try settings.chooseInterface()
        let identity = try settings.identity("station")
        // A private station's keys come from its code, kept with the station key so that a restart
        // keeps the guests it has.
        var seal: CodeSeal?
        if configuration.isPrivate {
            do throws(KeyStore.Failure) {
                seal = CodeSeal(
                    code: try KeyStore(directory: settings.stateDirectory).loadOrCreateCode(
                        renew: configuration.newCode))
            } catch {
                throw NodeError(.storage, error.description, cause: error)
            }
        }
        // The database first: a damaged or newer file stops the DJ before anything goes on air.
        let recorder = try DJRecorder(settings: settings, station: configuration.name.value)
        let store = recorder.store
        let saved: DJStore.Saved?
        do throws(DJStoreError) {
            if configuration.fresh { try store.clearStation() }
            saved = try store.loadStation()
        } catch {
            throw NodeError(.storage, "Cannot read the saved station: \(error.description)", cause: error)
        }
        // The sound server's source next (`--live pulse`): no server or no such source stops the DJ
        // before it goes on air, and the sink it makes any player can find at once.
        let openPulse = { @Sendable [configuration] (source: LiveSource) throws(NodeError) -> LivePulseSource in
            try LivePulseSource(
                source: source, station: configuration.name.value, defaultOutput: configuration.liveDefaultOutput,
                frameBytes: configuration.liveSettings.duration.samples() * LiveSampleFormat.station.bytesPerFrame)
        }
        let pulse = try configuration.live.flatMap { source throws(NodeError) -> LivePulseSource? in
            guard source.isPulse else { return nil }
            return try openPulse(source)
        }
        if let notice = pulse?.notice { settings.reporter.report(.notice(notice)) }
        // The ports of the last run, if free: listeners still send there, and play from there.
        let lastPorts = (try? store.ports()) ?? [:]
        let sockets: UnicastSockets
        if configuration.port == 0, let last = lastPorts["udp"],
            let same = try? settings.unicastSockets(interface: interface, port: last)
        {
            sockets = same
        } else {
            sockets = try settings.unicastSockets(interface: interface, port: configuration.port)
        }
        let transport = Transport(sockets: sockets, identity: identity, seal: seal)
        // The HTTP server (music and the web page) on the port of the DJ's last run if it is free
        // (listeners' players still hold its URLs), else any; its port goes in the advert.
        // A client's machine is its link-layer address: aliases of one machine share its fair share
        // of the server's connections (docs/SECURITY.md).
        let address = interface.address.host
        // Guests are counted per machine: each sender's link-layer address, from the neighbour table.
        let neighbours = NeighbourTable(interface: interface)
        let machineOf: @Sendable (String) -> String? = {
            if case .linkLayer(let mac) = neighbours.machine(of: $0) { mac } else { nil }
        }
        let server: MediaServer
        if let last = lastPorts["media"],
            let same = try? MediaServer(address: address, port: last, machineOf: machineOf)
        {
            server = same
        } else {
            do { server = try MediaServer(address: address, port: 0, machineOf: machineOf) } catch {
                throw NodeError(.network, "Cannot serve the music and the web page over HTTP on \(address) (\(error)).")
            }
        }
        self.server = server
        server.requireProof(
            seal.map {
                MediaServer.Proof(header: $0.mediaProof, cookieName: PrivateGate.cookie, cookie: $0.webProof)
            })
        let advert = StationAdvert(
            stationID: identity.stationID, group: identity.stationID.multicastGroup, publicKey: identity.publicKey,
            webPort: server.port, isPrivate: seal != nil, takesSessionVotes: true)
        let txt = seal.map { advert.sealedTXTRecord($0) } ?? advert.txtRecord
        let port = sockets.port
        // Announced first: mDNS probing takes a good part of a second, so the library, the player
        // and the rest are made ready while it runs (the machine's own publish finds it done).
        let avahi: AvahiSession
        do {
            avahi = try AvahiSession(interfaceIndex: interface.index, families: interface.families) { event in
                inbox.push(.discovery(DiscoveryEvent(event)))
            }
            try avahi.publish(
                name: configuration.name.value, type: StationAdvert.serviceType, port: port, txt: txt)
            Log.debug(.discovery, "handed the station to Avahi to announce")
        } catch { throw NodeError(.discovery, error.description, cause: error) }
        // In a unicast DNS-SD domain too: a refused update stops the DJ here, with the server's answer.
        publisher = try settings.domain.map { domain throws(NodeError) in
            try DomainPublisher(
                settings: domain, name: configuration.name.value, station: identity.stationID, interface: interface,
                port: port, txt: txt, reporter: settings.reporter)
        }
        // Catalog tracks alone need no library (unless the saved queue has library tracks);
        // otherwise the folders (or the demo library) are served.
        let savedLocal = saved?.station.queue.contains { $0.id.hasPrefix(Self.localPrefix) } ?? false
        let isLive = configuration.live != nil
        if isLive || (configuration.libraries.isEmpty && !configuration.extraTracks.isEmpty && !savedLocal) {
            library = nil
        } else {
            library = try LocalLibrary(
                folders: configuration.libraries, stateDirectory: settings.stateDirectory, server: server)
        }
        for warning in library?.warnings ?? [] { settings.reporter.report(.warning(warning)) }
        let ports = ["udp": port, "media": server.port]
        do throws(DJStoreError) { try store.rememberPorts(ports) } catch {
            settings.reporter.report(.warning("Cannot note the DJ's ports (\(error.description))."))
        }
        let now = settings.clock.now()
        // A live station's queue is the live segment alone; a station saved from files is not carried on.
        let tracks = isLive ? [Track.live] : (library?.tracks ?? []) + configuration.extraTracks
        let restored = saved.flatMap { saved in
            isLive && saved.station.queue != [Track.live]
                ? nil : Self.restore(saved, tracks: tracks, now: now, reporter: settings.reporter)
        }
        recorder.continuing = restored != nil
        // The DJ's own player fetches from its own server, which asks a private station's proof of it too.
        var playback = configuration.playback
        playback.mediaProof = seal?.mediaProof
        // A live DJ has no file to play: libmpv stays off, and its own speakers play the frames it
        // sends through a live output as a listener's do (below), unless --no-audio.
        // From the sound server, only to the sink that was the default, never into the station's own.
        let playsLive = isLive && !playback.noAudio && (pulse == nil || pulse?.speakersSink != nil)
        if isLive { playback.noAudio = true }
        let player = try PlayerDriver(role: "dj", options: playback, clock: settings.clock, inbox: inbox)
        let machine = DJMachine(
            configuration: DJMachine.Configuration(
                name: configuration.name.value, advert: advert, queue: tracks, port: port,
                interfaceName: interface.name, address: interface.address.host, playsAudio: player.playsAudio,
                crowdSkipPercent: configuration.crowdSkipPercent, requestMode: configuration.requestMode,
                maxRequestsPerGuest: configuration.maxRequestsPerGuest,
                votersPerAddress: configuration.votersPerAddress, voteWeightAfterNs: configuration.voteWeightAfterNs,
                saved: restored, live: isLive ? configuration.liveSettings : nil, playsLive: playsLive),
            verifier: SodiumVerifier(seal: seal, sessions: identity), now: now,
            erasureCode: isLive ? ISALErasureCode() : nil)
        // A private DJ seals everything it sends, from the start.
        var outbox = transport.outbox()
        outbox.sealFor(identity.stationID)
        runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, outbox: outbox,
            player: player, catalog: configuration.catalog, recorder: recorder, avahi: avahi, inbox: inbox)
        runtime.neighbours = neighbours
        if playsLive {
            // At the station's delay by the DJ's own clock: heard when every listener hears it.
            runtime.io.liveOptions = LivePlayer.Options(
                server: configuration.playback.soundServer, sink: pulse?.speakersSink)
            runtime.io.liveOnTheDJ = true
            runtime.io.liveDriftStore = LiveDriftStore(directory: settings.stateDirectory)
        }
        if isLive { runtime.io.liveSent = { [weak runtime] in runtime?.machine.liveSent } }
        // The web page: its state follows the machine after every change it reports.
        let hub = WebHub()
        self.hub = hub
        // The station's delay (`--latency`), told to each page.
        let liveWeb = isLive ? LiveWebRelay(delayMs: Int(configuration.liveSettings.delayMs)) : nil
        self.liveWeb = liveWeb
        // The page answers only under the DJ's own addresses and names (DNS rebinding, docs/WEB.md).
        let hostName = ListenerNode.hostName()
        let names =
            (hostName.isEmpty ? [] : [hostName, hostName + ".local"]) + [avahi.hostName].compactMap { $0 }
            + (settings.domain.map { [DNSName.hostName(station: identity.stationID, domain: $0.domain)] } ?? [])
        let site = WebSite(
            hub: hub, inbox: inbox, clock: settings.clock, catalog: configuration.catalog, address: address,
            port: server.port,
            otherAddresses: (interface.hasIPv4 ? [interface.address.host] : []) + interface.ipv6Addresses.map(\.host),
            names: names, neighbours: neighbours,
            gate: seal.map { PrivateGate(code: $0.code, proof: $0.webProof, clock: settings.clock) },
            currentAddresses: {
                NetworkInterface.all().flatMap { ($0.hasIPv4 ? [$0.address.host] : []) + $0.ipv6Addresses.map(\.host) }
            }, live: liveWeb)
        let mediaPrefix = server.url(token: "")
        let artwork = configuration.catalog != nil
        let liveArtwork = site.liveArtwork
        liveArtwork?.follow(machine)
        hub.publish(
            WebState.json(machine, at: now, mediaPrefix: mediaPrefix, artwork: artwork), votes: machine.engine.votes)
        // MPRIS: catalog tracks' artwork from the page, as the page shows it.
        let artBase = artwork ? URLHost.httpOrigin(address, port: server.port) : nil
        let mpris = MPRISBridge.start(
            MPRISView(machine, at: now, artBase: artBase), inbox: inbox, sessionBus: settings.sessionBus)
        self.mpris = mpris
        runtime.afterEffects = { machine, effects, now in
            if let liveWeb { Self.relay(effects, to: liveWeb) }
            mpris?.stepped(effects) { MPRISView(machine, at: now, artBase: artBase) }
            for case .report(.speakers(let list)) in effects { hub.publish(speakers: list) }
            guard effects.contains(where: Self.changesPage) else { return }
            liveArtwork?.follow(machine)
            hub.publish(
                WebState.json(machine, at: now, mediaPrefix: mediaPrefix, artwork: artwork),
                votes: machine.engine.votes)
        }
        runtime.webReply = { ticket, message in hub.answer(ticket, message) }
        if let publisher { runtime.io.every(publisher.refreshNs) { publisher.refresh() } }
        server.setWebHandler(site)
        settings.reporter.report(.webPage(url: site.guestURL, djURL: site.djURL))
        let djLink = DJLink(origin: URLHost.httpOrigin(address, port: server.port), token: site.djToken)
        do { link = try djLink.write(to: settings.stateDirectory) } catch {
            link = nil
            settings.reporter.report(
                .warning(
                    "Cannot write \(DJLink.fileName) in \(settings.stateDirectory.path) (\(error)): "
                        + "'partyradio speakers' and 'speaker-set' will not reach this DJ."))
        }
        if let seal { settings.reporter.report(.joinCode(seal.code)) }
        follower =
            isLive
            ? Self.followPlayer(
                configuration.livePlayer, sessionBus: settings.sessionBus, own: mpris?.busName, inbox: inbox,
                reporter: settings.reporter) : nil
        if let follower { runtime.io.onPlayerCall = { follower.call($0) } }
        capture = try configuration.live.map { source throws(NodeError) in
            try LiveCapture(
                source: source, pulse: pulse, reopen: { () throws(NodeError) in try openPulse(source) },
                settings: configuration.liveSettings, clock: settings.clock, inbox: inbox)
        }
    }

    /// A live station's follower of the MPRIS player `choice` names on the session bus: its state
    /// goes to the machine as ``LiveInput/player(_:)``. No session bus (or one that cannot be
    /// reached) is said once; the station then shows "Live".
    static func followPlayer(
        _ choice: LivePlayerChoice, sessionBus: String?, own: String?, inbox: Inbox<NodeInput>,
        reporter: any NodeReporter
    ) -> MPRISFollower? {
        guard choice != .none else { return nil }
        guard let sessionBus else {
            reporter.report(
                .notice(
                    "No session bus (DBUS_SESSION_BUS_ADDRESS is not set): no player's track as now playing, the "
                        + "station shows Live."))
            return nil
        }
        do {
            return try MPRISFollower(
                address: sessionBus, choice: choice, own: own.map { [$0] } ?? [],
                onState: { inbox.push(.live(.player($0))) }, log: { Log.debug(.node, "live player: \($0)") })
        } catch {
            reporter.report(
                .notice("Cannot follow a player for now playing (\(error.description)): the station shows Live."))
            return nil
        }
    }

    /// Whether an effect changes what the page shows: every report but the twice-a-second
    /// progress snapshot (the page moves its progress bar itself).
    static func changesPage(_ effect: Effect) -> Bool {
        guard case .report(let event) = effect else { return false }
        if case .state(_, _, .progress) = event { return false }
        return true
    }

    static let localPrefix = "local:"

    /// The live frames the DJ sends to its group go to the listening pages too (once each: the
    /// copies to unicast listeners are left out).
    static func relay(_ effects: [Effect], to relay: LiveWebRelay) {
        for effect in effects {
            if case .send(.liveFrame(let frame), to: .group, station: _) = effect { relay.publish(frame) }
        }
    }

    /// The saved station as this run can play it: library tracks at this run's URLs (the ones whose
    /// files are no longer in the libraries named now are dropped, with a warning), catalog tracks
    /// as saved, music new to the queue added at its end, and — after a crash — the position moved
    /// on by the time the DJ was away (``SavedStation/resumed(afterNs:)``).
    static func restore(_ saved: DJStore.Saved, tracks: [Track], now: LocalTime, reporter: any NodeReporter)
        -> SavedStation
    {
        let available = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let (mapped, dropped) = saved.station.mappingTracks { track in
            track.id.hasPrefix(localPrefix) ? available[track.id] : track
        }
        if !dropped.isEmpty {
            let titles = dropped.prefix(3).map { "'\($0.title)'" }.joined(separator: ", ")
            let more = dropped.count > 3 ? " and \(dropped.count - 3) more" : ""
            reporter.report(
                .warning(
                    "Dropped \(dropped.count) saved track\(dropped.count == 1 ? "" : "s") whose files are not in the "
                        + "libraries named now: \(titles)\(more)."))
        }
        let station = mapped.addingNew(tracks)
        return saved.stopped ? station : station.resumed(afterNs: now - saved.savedAt)
    }

    /// Scans the library folders again (SIGHUP, `systemctl reload`): music new since the last
    /// scan is queued at the end, as catalog tracks added with `add` are. Files that are gone
    /// stay queued until the DJ starts again, which drops them; the DJ says how many.
    public func reloadLibrary() {
        guard let library else {
            return reporter.report(.warning("Nothing to reload: this station plays no --library folders."))
        }
        rescans.enqueue { [inbox] in
            let (new, warnings, gone) = library.rescan()
            inbox.push(.libraryRescanned(new: new, gone: gone, warnings: warnings))
        }
    }

    /// Runs until `quit` (a command, a signal or a fatal Avahi failure); says goodbye on the way out.
    public func run() throws(NodeError) {
        defer {
            publisher?.stop()  // first: guests stop finding a station that is gone
            rescans.stop(waiting: false)
            capture?.stop(waiting: true)  // a sound server's sink is unloaded before the process ends
            follower?.close()
            mpris?.close()
            liveWeb?.close()
            link?.remove()
            hub.close()  // ends the event streams first: stopping the server waits for them
            server.stop()
        }
        try runtime.run()
    }

    /// Drops counted so far, by reason.
    public var drops: DropCounters { runtime.machine.filter.drops }
}
