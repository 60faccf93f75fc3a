import Glibc
import PartyRadioCore
import PartyRadioLive
import PartyRadioNet

/// `partyradio listen`: runs a ``ListenerMachine`` on the ``NodeRuntime``: finds the station,
/// tunes in, plays along, and says when the station goes silent or off air.
public final class ListenerNode {
    private let runtime: NodeRuntime<ListenerMachine>
    /// The desktop's media controls, when there is a session bus.
    private let mpris: MPRISBridge?

    /// Sets up the listener; the search for the station happens in ``run()``.
    /// - Parameters:
    ///   - query: name, unique name prefix or station ID; nil means the only station there is.
    ///   - timeoutNs: how long to look (exit code 3 after that).
    ///   - name: the name the DJ's listener list shows.
    ///   - trustNewKey: accept (and remember) a station that shows another key than this state
    ///     directory met before, instead of refusing it.
    ///   - liveExtraNs: how much later than the station's delay a live station plays here.
    ///   - speaker: `partyradio speaker`: its room (the name is `name`); it signs with its own
    ///     `speaker.key` and keeps its settings in `speaker.json` (docs/SPEAKERS.md).
    public static func tuneIn(
        _ query: String?, timeoutNs: Int64, playback: PlaybackOptions = PlaybackOptions(), name: GuestName,
        trustNewKey: Bool = false, liveExtraNs: Int64 = 0, speaker room: String? = nil, settings: NodeSettings,
        inbox: Inbox<NodeInput>
    ) throws(NodeError) -> ListenerNode? {
        try ListenerNode(
            query: query, timeoutNs: timeoutNs, playback: playback, name: name, trustNewKey: trustNewKey,
            liveExtraNs: liveExtraNs, speakerRoom: room, settings: settings, inbox: inbox)
    }

    private init(
        query: String?, timeoutNs: Int64, playback: PlaybackOptions, name: GuestName, trustNewKey: Bool,
        liveExtraNs: Int64, speakerRoom: String?, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) {
        let interface = try settings.chooseInterface()
        let identity = try settings.identity(speakerRoom != nil ? "speaker" : "listener")
        let speakerStore = speakerRoom != nil ? SpeakerStore(directory: settings.stateDirectory) : nil
        var speaker: ListenerMachine.Speaker?
        if let speakerRoom, let speakerStore {
            let (kept, warning) = speakerStore.load()
            if let warning { settings.reporter.report(.warning(warning)) }
            speaker = .init(name: name.value, room: speakerRoom, key: identity.publicKey, kept: kept)
        }
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        // Seen in the last minute: ask it at once where it was, while mDNS browses as usual.
        let recent = RecentStations(directory: settings.stateDirectory)
        if let seen = recent.fresh(for: query, now: settings.clock.now()) {
            inbox.push(.discovery(.resolved(name: seen.service, address: seen.address, port: seen.port, txt: seen.txt)))
        }
        // mDNS finds and resolves the station (tens of milliseconds) while the player loads
        // libmpv; what it finds waits in the inbox for the machine.
        let avahi: AvahiSession
        do {
            avahi = try AvahiSession(interfaceIndex: interface.index, families: interface.families) { event in
                inbox.push(.discovery(DiscoveryEvent(event)))
            }
            try avahi.browse(type: StationAdvert.serviceType)
            // A station asked for by its name is resolved at once, beside the browse (before the
            // player's libmpv load below begins: a thread started during it would wait for it).
            if let query { avahi.resolveStation(named: query, interface: interface, inbox: inbox) }
        } catch { throw NodeError(.discovery, error.description, cause: error) }
        let known = KnownStations(directory: settings.stateDirectory)
        let machine = ListenerMachine(
            configuration: ListenerMachine.Configuration(
                query: query, timeoutNs: timeoutNs, interfaceName: interface.name, listenerName: name.value,
                playsAudio: !playback.noAudio, knownKeys: known.keys, trustNewKey: trustNewKey,
                wantsUnicast: settings.domain != nil, liveExtraNs: liveExtraNs, speaker: speaker,
                key: identity.publicKey),
            verifier: settings.verifier)
        let mpris = MPRISBridge.start(
            MPRISView(machine, at: settings.clock.now()), inbox: inbox, sessionBus: settings.sessionBus)
        self.mpris = mpris
        // The player last, on a thread of its own: libmpv loads (about 80 ms, several times that on
        // a busy machine) while the node tunes in and synchronises its clock. glibc's dlopen holds
        // the lock that every new thread takes for its TLS, so every thread the node needs before
        // it plays (Avahi's, MPRIS's) is started above, before the load begins.
        var playback = playback
        playback.mediaProof = settings.seal?.mediaProof
        let player: PlayerDriver
        do {
            player = try PlayerDriver(
                role: "listener", options: playback, clock: settings.clock, inbox: inbox,
                cacheDirectory: settings.stateDirectory.appendingPathComponent("media-cache"), inBackground: true)
            runtime = try NodeRuntime(
                machine: machine, settings: settings, interface: interface, transport: transport, player: player,
                knownStations: known, avahi: avahi, inbox: inbox)
        } catch {
            mpris?.close()
            throw error
        }
        runtime.io.speakerStore = speakerStore
        // A live station plays through libpulse (docs/LIVE.md, "The listener's output"), at the
        // delay its frames say plus this listener's extra.
        if !playback.noAudio {
            runtime.io.liveOptions = LivePlayer.Options(server: playback.soundServer)
            runtime.io.liveDriftStore = LiveDriftStore(directory: settings.stateDirectory)
            runtime.io.liveExtraNs = liveExtraNs
            runtime.io.liveNetwork = { [weak runtime] in runtime?.machine.liveNetwork ?? LiveListenerNetwork() }
        }
        runtime.afterEffects = { machine, effects, now in
            mpris?.stepped(effects) { MPRISView(machine, at: now) }
            for case .report(.tunedIn(let station)) in effects { recent.remember([station], at: now) }
        }
    }

    /// Runs until quit, or until the station says goodbye; throws when the station is not found.
    public func run() throws(NodeError) {
        defer { mpris?.close() }
        try runtime.run()
    }

    /// This machine's host name (empty if it has none).
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
