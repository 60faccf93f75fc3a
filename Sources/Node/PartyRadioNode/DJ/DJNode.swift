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
    /// `--crowd-skip`: the share of the room (percent) whose down votes skip a track; 0: off.
    public var crowdSkipPercent: Int
    /// `--requests`: how guests' requests are taken.
    public var requestMode: RequestMode
    /// `--max-requests`: requests one guest may have waiting at once.
    public var maxRequestsPerGuest: Int
    /// `--voters-per-address`: voter keys counted per source address.
    public var votersPerAddress: Int

    public init(
        name: StationName, libraries: [String] = [], extraTracks: [Track] = [], port: UInt16 = 0,
        playback: PlaybackOptions = PlaybackOptions(), catalog: (any TrackCatalog)? = nil,
        crowdSkipPercent: Int = 50, requestMode: RequestMode = .open, maxRequestsPerGuest: Int = 3,
        votersPerAddress: Int = 1
    ) {
        self.votersPerAddress = votersPerAddress
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

    public init(configuration: DJConfiguration, settings: NodeSettings, inbox: Inbox<NodeInput> = Inbox())
        throws(NodeError)
    {
        let interface = try settings.chooseInterface()
        let identity = try settings.identity("station")
        let socket = try settings.unicastSocket(interface: interface, port: configuration.port)
        let transport = Transport(socket: socket, identity: identity, clock: settings.clock, faults: settings.faults)
        let advert = StationAdvert(
            stationID: identity.stationID, group: identity.stationID.multicastGroup, publicKey: identity.publicKey)
        // Catalog tracks alone need no library; otherwise the folders (or the demo library) are served.
        if configuration.libraries.isEmpty && !configuration.extraTracks.isEmpty {
            library = nil
        } else {
            library = try LocalLibrary(
                folders: configuration.libraries, stateDirectory: settings.stateDirectory,
                address: interface.address.host)
        }
        for warning in library?.warnings ?? [] { settings.reporter.report(.warning(warning)) }
        let port: UInt16
        do { port = try socket.localAddress().port } catch {
            throw NodeError(.network, "Cannot read the DJ's UDP port: \(error).", cause: error)
        }
        let player = try PlayerDriver(role: "dj", options: configuration.playback, clock: settings.clock, inbox: inbox)
        let machine = DJMachine(
            configuration: DJMachine.Configuration(
                name: configuration.name.value, advert: advert,
                queue: (library?.tracks ?? []) + configuration.extraTracks,
                port: port, interfaceName: interface.name, address: interface.address.host,
                playsAudio: player.playsAudio, crowdSkipPercent: configuration.crowdSkipPercent,
                requestMode: configuration.requestMode, maxRequestsPerGuest: configuration.maxRequestsPerGuest,
                votersPerAddress: configuration.votersPerAddress),
            verifier: SodiumVerifier(), now: settings.clock.now())
        let stats = try StatsRecorder(settings: settings, station: configuration.name.value)
        runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, player: player,
            catalog: configuration.catalog, stats: stats, inbox: inbox)
    }

    /// Runs until `quit` (a command, a signal or a fatal Avahi failure); says goodbye on the way out.
    public func run() throws(NodeError) {
        defer { library?.server.stop() }
        try runtime.run()
    }

    /// Drops counted so far, by reason.
    public var drops: DropCounters { runtime.machine.filter.drops }
}
