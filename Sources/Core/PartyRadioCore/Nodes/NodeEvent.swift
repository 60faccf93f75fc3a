/// A station as an observer sees it: DNS-SD facts plus the last snapshot heard.
public struct StationSummary: Sendable, Equatable {
    public var id: StationID
    public var serviceName: String
    public var address: String
    public var port: UInt16
    public var advert: StationAdvert
    public var snapshot: StateSnapshot
    /// The station's position as estimated when the summary was made.
    public var positionNs: Int64
    /// Who listens, by name, as the station last said (empty until it has).
    public var listeners: [Roster.Entry] = []

    public init(
        id: StationID, serviceName: String, address: String, port: UInt16, advert: StationAdvert,
        snapshot: StateSnapshot, positionNs: Int64
    ) {
        self.id = id
        self.serviceName = serviceName
        self.address = address
        self.port = port
        self.advert = advert
        self.snapshot = snapshot
        self.positionNs = positionNs
    }

    public var name: String { snapshot.stationName }
}

/// What nodes tell their user. The CLI renders these as a live terminal view or, with
/// `--json-events`, as one JSON object per line.
public enum NodeEvent: Sendable {
    // DJ
    case stationStarted(
        name: String, id: StationID, interface: String, address: String, port: UInt16,
        group: MulticastGroup, fingerprint: String, queueLength: Int, isPrivate: Bool = false)
    /// A private station's join code (shown with its QR code on the DJ's terminal).
    case joinCode(JoinCode)
    case stationPublished(name: String)
    /// The DJ's web page: the URL for guests, and the DJ's own link (with its secret token).
    case webPage(url: String, djURL: String)
    /// The DJ asked to see a QR code: of its own link (`qr dj`, to open it on a phone) or of the
    /// guests' page (`qr`).
    case webQR(forDJ: Bool)
    /// avahi-daemon went away (`running` false) or came back: the node plays on meanwhile and
    /// publishes and browses again by itself (DJ, listener, observer).
    case discoveryDaemon(running: Bool)
    case stationRenamed(from: String, to: String)
    case listenersChanged(count: Int, joined: String?, left: Bool)
    /// A vote changed the tally: `voter` is the voter key's fingerprint, `name` the name it gave as
    /// a listener (cleaned when it arrived), if the DJ knows one.
    case voteCounted(trackID: String, choice: VoteChoice, tally: Tally, voter: String, name: String?)
    /// The playing track was cut short: by the DJ, or by the crowd's down votes (DJ and listeners).
    case trackSkipped(TrackSkipped)
    /// The DJ's listener list changed: who listens, and for how long.
    case roster(Roster)
    /// A chat line the DJ delivered (DJ and listeners).
    case chat(ChatLine)
    /// Something done, for the user to know (not a problem: see ``warning(_:)``).
    case notice(String)
    /// The DJ's own settings changed (or at the start): repeat mode (`off`, `one`, `all`) and
    /// the local volume.
    case djSettings(repeatMode: String, volume: Int)
    /// The DJ's speakers changed (one came, went, or reported other settings): all of them.
    case speakers([SpeakerBook.Entry])
    /// The DJ went off air; `dropped` counts the datagrams it refused, by reason.
    case stationStopped(name: String, dropped: DropCounters)
    // Listener
    case tunedIn(StationSummary)
    case stationSilent(name: String)
    case stationBack(name: String)
    case stationGone(name: String, reason: String)
    /// A station name met before shows another key (key fingerprints): an impostor, or a DJ
    /// with a new key. The listener refuses it unless told to trust the new key.
    case stationKeyChanged(name: String, known: String, shown: String)
    /// The listener's own settings changed (or it tuned in): its mute, its volume, its vote.
    case listenerSettings(ListenerSettings)
    /// A speaker's settings changed (a DJ's control), or it started: what it plays at.
    case speakerSettings(SpeakerSettings)
    /// The listener stopped; `dropped` counts the datagrams it refused, by reason.
    case listenerStopped(dropped: DropCounters)
    /// A live station's output, every few seconds while it plays and once as it stops.
    case liveStatus(LiveStatus)
    /// What a live DJ sent so far, every few seconds while it broadcasts and once as it stops.
    case liveSent(LiveSent)
    // Both: the state changed (track, pause, votes, listeners), or a periodic progress update.
    case state(StateSnapshot, positionNs: Int64, change: StateChange)
    case warning(String)
    /// The DJ searched the catalog: numbered results, each with the ID to `add`.
    case searchResults(term: String, tracks: [Track])
    /// Tracks were added to the queue.
    case queued(tracks: [Track], queueLength: Int)
    /// What plays next changed: the guests' requests, then the queue (DJ and listeners).
    case upNext(QueueList)
    /// The DJ answered a guest's request: queued, or refused and why.
    case requestAnswered(RequestAck, guest: String)
    // Observer
    case stationsChanged([StationSummary], change: StationDirectory.Change)

    public enum StateChange: String, Sendable {
        case track, paused, resumed, seek, votes, listeners, queue, progress
    }
}

/// Receives a node's events; called on the node's own thread.
public protocol NodeReporter: Sendable {
    func report(_ event: NodeEvent)
}

/// What a listener's live output did so far (docs/LIVE.md, "The listener's output").
public struct LiveStatus: Equatable, Sendable {
    /// The jitter buffer's counters: frames played, rebuilt from FEC, concealed, late, ….
    public var counters: LiveCounters
    /// Times the output was placed on the station's timeline (the first frame, after a silence).
    public var placements: Int
    /// Frames dropped because they came far past their time (the machine or the output stalled).
    public var skipped: Int
    /// The last error measured: when a frame was heard minus when it was due, in µs (+: late).
    public var errorUs: Int64
    /// The resampling ratio's departure from 1, in ppm.
    public var ppm: Double
    /// What the listener's machine saw on the way: frames asked of the DJ again, frames that came
    /// after they were asked for, and the datagrams it dropped so far, by reason.
    public var network: LiveListenerNetwork
    /// Whether the output's thread runs at real-time priority (where the system allows it).
    public var realTime: Bool

    public init(
        counters: LiveCounters, placements: Int, skipped: Int, errorUs: Int64, ppm: Double,
        network: LiveListenerNetwork = LiveListenerNetwork(), realTime: Bool = false
    ) {
        self.realTime = realTime
        self.counters = counters
        self.placements = placements
        self.skipped = skipped
        self.errorUs = errorUs
        self.ppm = ppm
        self.network = network
    }
}

/// A live listener's counters from its machine (docs/LIVE.md, "Counters"), beside its output's.
public struct LiveListenerNetwork: Equatable, Sendable {
    /// Frame numbers asked of the DJ again (each ask counted), and frames that came after.
    public var asked: UInt64
    public var arrivedAfterAsking: UInt64
    /// Frame numbers found missing on arrival (lost on the way or overtaken), told to the DJ.
    public var lost: UInt64
    /// Datagrams dropped so far (forged, replayed, malformed, …), by reason.
    public var dropped: DropCounters

    public init(
        asked: UInt64 = 0, arrivedAfterAsking: UInt64 = 0, lost: UInt64 = 0, dropped: DropCounters = DropCounters()
    ) {
        self.asked = asked
        self.arrivedAfterAsking = arrivedAfterAsking
        self.lost = lost
        self.dropped = dropped
    }
}

/// What a live DJ sent (docs/LIVE.md, "Counters"): its frames and repairs, its answers to resend
/// requests, and what it dropped.
public struct LiveSent: Equatable, Sendable {
    public var frames: UInt64
    public var repairs: UInt64
    /// Blocks closed before they were full (the source slipped or went silent).
    public var shortBlocks: UInt64
    /// Blocks sent without repairs (no listener lost frames), listeners' reports of lost frames, and
    /// reports the numbers this DJ skipped explain (not taken as losses).
    public var unprotectedBlocks: UInt64
    public var lossReports: UInt64
    public var lossReportsExplained: UInt64
    /// Frames sent again on a listener's request; asked for but no longer kept.
    public var resent: UInt64
    public var resendsMissed: UInt64
    /// Frames a listener's budget did not allow; requests from a sender not listening.
    public var resendsOverBudget: UInt64
    public var resendsIgnored: UInt64
    /// Datagrams dropped so far, by reason.
    public var dropped: DropCounters

    public init(
        frames: UInt64, repairs: UInt64, shortBlocks: UInt64, unprotectedBlocks: UInt64 = 0, lossReports: UInt64 = 0,
        lossReportsExplained: UInt64 = 0, resent: UInt64, resendsMissed: UInt64, resendsOverBudget: UInt64,
        resendsIgnored: UInt64, dropped: DropCounters
    ) {
        self.frames = frames
        self.repairs = repairs
        self.shortBlocks = shortBlocks
        self.unprotectedBlocks = unprotectedBlocks
        self.lossReports = lossReports
        self.lossReportsExplained = lossReportsExplained
        self.resent = resent
        self.resendsMissed = resendsMissed
        self.resendsOverBudget = resendsOverBudget
        self.resendsIgnored = resendsIgnored
        self.dropped = dropped
    }
}
