/// A node as a state machine: it takes an input at an explicit instant and hands back the
/// effects to carry out. No sockets, threads, clocks or C inside (as quinn-proto's `Connection`
/// or h11 do it): the runtime in PartyRadioNode executes the effects on real I/O, and the
/// simulated LAN in the tests executes them in memory from one seed.
///
/// Contract (docs/ARCHITECTURE.md):
/// - `handle` is called with non-decreasing instants, on one thread at a time.
/// - After every call the caller reads ``nextWakeup`` and delivers ``NodeInput/timer`` no later
///   than that instant (early is harmless).
/// - When ``isFinished`` turns true the caller stops; ``exitError`` says why, if it failed.
public protocol NodeMachine {
    /// Handles one input at local instant `now`; returns what to do, in order.
    mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect]
    /// Handles inputs that arrived together (the datagrams of one wake-up), each at its instant,
    /// and returns what to do for all of them: at most one ``Effect/save(_:)``, first (it holds
    /// everything the batch changed, so nothing the batch acknowledges goes out unsaved). A
    /// machine may coalesce more (the DJ sends one snapshot for a batch's votes); the default
    /// handles each input in turn and keeps the last save.
    mutating func handle(batch inputs: [(NodeInput, LocalTime)]) -> [Effect]
    /// When the machine next wants ``NodeInput/timer``; nil: only inputs wake it.
    var nextWakeup: LocalTime? { get }
    var isFinished: Bool { get }
    var exitError: NodeError? { get }
}

extension NodeMachine {
    public mutating func handle(batch inputs: [(NodeInput, LocalTime)]) -> [Effect] {
        var effects: [Effect] = []
        var save: Effect?
        for (input, now) in inputs where !isFinished {
            for effect in handle(input, at: now) {
                if case .save = effect { save = effect } else { effects.append(effect) }
            }
        }
        if let save { effects.insert(save, at: 0) }
        return effects
    }
}

/// Where a datagram goes: a peer, or the station's multicast group.
public enum Destination: Hashable, Sendable, CustomStringConvertible {
    case peer(PeerAddress)
    case group(MulticastGroup)

    public var description: String {
        switch self {
        case .peer(let address): address.description
        case .group(let group): "group \(group)"
        }
    }
}

/// A network address as the core sees it: what DNS-SD resolved or a datagram came from.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// What wakes a machine.
public enum NodeInput: Sendable {
    /// The node starts: the first input every machine gets.
    case start
    /// A datagram came off a socket (raw: the machine decodes, verifies and de-duplicates it), with
    /// the sender's machine as the neighbour table says (nil: the runtime did not look; the address
    /// stands for the machine).
    case datagram([UInt8], from: PeerAddress, machine: MachineID? = nil)
    /// A deadline the machine asked for (``NodeMachine/nextWakeup``) is due.
    case timer
    /// DNS-SD: a service was found, resolved, removed; our own publication's fate.
    case discovery(DiscoveryEvent)
    /// One of the DJ's controls (its keys, lines, media keys and web controls), typed at the edge.
    case djControl(DJControl)
    /// A control from the DJ's web page, whose outcome (what the DJ's terminal says of it) goes
    /// back to the HTTP request `ticket` names (``WebReply/djOutcome(_:ok:)``).
    case webDJControl(DJControl, ticket: UInt64)
    /// One of a listener's controls (its media keys).
    case listenerControl(ListenerControl)
    /// The DJ's library folders were scanned again (SIGHUP): music new since the last scan, the
    /// number of files gone (they stay queued until the next start), and what the scan warned of.
    case libraryRescanned(new: [Track], gone: Int, warnings: [String])
    /// The player could not play the source.
    case playerFailed(String)
    /// The catalog answered a request the machine made.
    case catalog(CatalogAnswer)
    /// The user (a signal, `q`) asked to stop.
    case quit
    /// A guest on the DJ's web page voted, requested or chatted (``WebAction``).
    case web(WebAction)
    /// A guest on the DJ's web page searched the DJ's library and catalog; the answer goes to the
    /// HTTP request `ticket` names (``Effect/webReply(ticket:_:)``).
    case webSearch(String, ticket: UInt64)
    /// The DJ's live capture: a frame to send, or the source gone (``LiveInput``).
    case live(LiveInput)
    /// How this node's sound output does (its players, file or live): a speaker tells its DJ.
    case output(OutputReport)
}

/// How a node's sound output does, as its players see it: the DJ's list of speakers shows it
/// (``SpeakerStatus``).
public enum OutputReport: Hashable, Sendable {
    /// Its sound is this far from the station (ns; positive: late), as last measured (about once a
    /// second while it plays). A measure also means the output plays: a trouble said before is over.
    case syncError(Int64)
    /// It failed and is tried again (why, in a sentence).
    case failed(String)
    /// It plays again after a failure.
    case recovered
}

/// What a guest did on the DJ's web page, as the DJ machine takes it: the guest message a node
/// would have sent (a vote, request, request vote or chat line), from the guest's web key, with
/// a sequence the web server gives. The answer goes back as ``Effect/webReply(ticket:_:)``.
public struct WebAction: Sendable {
    /// ``Message/vote(_:)``, ``Message/requestSend(_:)``, ``Message/requestVote(_:)``,
    /// ``Message/chatSend(_:)``, or ``Message/hello(_:)``, ``Message/heartbeat(_:)`` and
    /// ``Message/leave(_:)`` for a page that listens (it counts among the listeners), or
    /// ``Message/query(_:)`` from a page open on the station (its event stream, every
    /// ``PresenceBook/pageIntervalNs``: its machine is present, docs/SECURITY.md); anything else is ignored.
    public var message: Message
    /// The guest's key (derived from its browser's secret; never a node's).
    public var guest: PublicKey
    /// The browser's IP address.
    public var address: String
    /// The browser's machine, for the rules that count machines (nil: its address stands for it).
    public var machine: MachineID?
    /// Increasing for every action the web server takes (replays are refused as for datagrams).
    public var sequence: UInt64
    /// Names the HTTP request waiting for the answer; nil: nobody waits (a listening page's hello).
    public var ticket: UInt64?

    public init(
        message: Message, guest: PublicKey, address: String, machine: MachineID? = nil, sequence: UInt64,
        ticket: UInt64?
    ) {
        self.message = message
        self.guest = guest
        self.address = address
        self.machine = machine
        self.sequence = sequence
        self.ticket = ticket
    }
}

/// DNS-SD as the core sees it (the Avahi adapter's events, minus the C).
public enum DiscoveryEvent: Hashable, Sendable {
    case discovered(name: String)
    case resolved(name: String, address: String, port: UInt16, txt: [String])
    case unresolved(name: String)
    case removed(name: String)
    /// A record of a unicast DNS-SD domain that was left out, or that had a part left out, for
    /// `reason`: told once while it stays so, and counted (``StationWatch/drops``).
    case refused(name: String, reason: DomainDrop)
    /// The first sweep of the network is done.
    case allForNow
    case published(name: String)
    case renamed(from: String, to: String)
    case failed(String)
    /// avahi-daemon went away; the runtime waits for it, then publishes and browses again.
    case daemonLost
    /// avahi-daemon is back (and every station is reported again).
    case daemonBack
}

/// What a machine asks the world to do.
public enum Effect: Sendable {
    /// Encode, sign (with this node's key and next sequence number) and send.
    case send(Message, to: Destination, station: StationID)
    /// Seal every datagram sent to this station from now on: a private station whose TXT record
    /// opened under this node's code.
    case sealFor(StationID)
    /// Votes to this station may go with the session MAC made from this node's key and
    /// `stationKey` rather than a signature: its advert says it takes them (`mac=1`).
    case sessionFor(StationID, stationKey: PublicKey)
    /// The station's cookie challenge came: what this node sends there next shows its cookie, if
    /// the challenge answers a datagram it sent there lately (docs/PROTOCOL.md, "Admission cookies").
    case cookieFrom(StationID, CookieChallenge)
    /// Announce the station through DNS-SD.
    case publish(name: String, port: UInt16, txt: [String])
    /// Start browsing for stations; `resolving`: a station named by the guest, asked for at once
    /// besides (a one-shot mDNS query and Avahi's resolver), so it need not wait for the browse.
    case browse(resolving: String?)
    /// Join a station's multicast group (a listener, once tuned in).
    case joinGroup(MulticastGroup)
    /// Drive the player.
    case player(PlayerCommand)
    /// The clock view the player follows changed (new snapshot or estimate).
    case follow(StationClockView)
    /// A live station's frame or repair, authenticated, for the live output (docs/LIVE.md).
    case live(LiveReceived)
    /// Call a method of the MPRIS player a live DJ follows (its skip, pause and play; docs/LIVE.md).
    case livePlayer(LivePlayerCall)
    /// Ask the catalog; the answer comes back as ``NodeInput/catalog(_:)``.
    case catalog(CatalogRequest)
    /// Tell the user.
    case report(NodeEvent)
    /// A diagnostic for `-v`.
    case log(Log.Topic, String)
    /// A play finished (the DJ): keep it for the stats.
    case record(PlayRecord)
    /// The DJ's station changed in a way that must survive a crash: store it before the effects
    /// that follow (an acknowledgement is sent only once what it acknowledges is stored).
    case save(SavedStation)
    /// Remember the key a station name showed (a listener's trust on first use).
    case pin(name: String, key: PublicKey)
    /// A speaker keeps its settings and the controls that set them (its state directory), so that
    /// they hold across its restarts (docs/SPEAKERS.md).
    case keepSpeaker(SpeakerControlState)
    /// The answer to a web guest's action (``NodeInput/web(_:)``, ``NodeInput/webSearch(_:ticket:)``).
    case webReply(ticket: UInt64, WebReply)
}

/// What a listener's live output takes from its station.
public enum LiveReceived: Equatable, Sendable {
    case frame(LiveFrame)
    case repair(LiveRepair)
}

/// What the DJ answers a web guest: the acknowledgement a node would have had, or search results.
public enum WebReply: Equatable, Sendable {
    case message(Message)
    /// A vote counted (in the tally shown) that does not weigh toward crowd skip for this long yet:
    /// the guest's machine has not been present long enough (docs/WEB.md).
    case voteWeighsLater(VoteAck, inMs: UInt32)
    case searchResults(WebSearchResults)
    /// What a control from the DJ's page came to, as the DJ's terminal says it; `ok` false when it
    /// was refused (a name that stands for several guests, with the fingerprints to choose from).
    case djOutcome(String, ok: Bool)
}

/// A web guest's search: matches in the DJ's own queue, then the catalog's, and how the catalog
/// answered.
public struct WebSearchResults: Equatable, Sendable {
    public var library: [Track]
    public var catalog: [Track]
    public var catalogStatus: CatalogStatus

    public init(library: [Track], catalog: [Track], catalogStatus: CatalogStatus) {
        self.library = library
        self.catalog = catalog
        self.catalogStatus = catalogStatus
    }
}

/// How the catalog answered a search.
public enum CatalogStatus: Hashable, Sendable, CustomStringConvertible {
    case ok
    /// This DJ has no catalog.
    case unavailable
    case failed(String)

    public var description: String {
        switch self {
        case .ok: "ok"
        case .unavailable: "unavailable"
        case .failed(let why): "failed: \(why)"
        }
    }
}

/// What the player should do, decided by ``PlaybackPlanner``.
public enum PlayerCommand: Hashable, Sendable {
    /// Load the track and start it on the station position (or hold it paused there).
    case load(Track, paused: Bool)
    case pause
    /// Start again from the station position (after a pause, a seek, a moved anchor).
    case resume
    case stop
    /// The local volume, 0–100.
    case volume(Int)
    /// How much later than the station this node plays, in nanoseconds (a speaker's delay trim,
    /// docs/SPEAKERS.md): a file is held that much behind the station position, a live station's
    /// output plays that much after the station's delay.
    case delayTrim(Int64)
    /// Fetch these sources ahead, in this order (they play next): a listener's media cache.
    case prefetch([String])
    /// Fetch this source at once, before anything fetched ahead: the station's track, as soon as
    /// the listener learns of it (while its clock is still being synchronised, before the load).
    case fetch(String)
}

/// A catalog question from the DJ's controls.
public enum CatalogRequest: Hashable, Sendable {
    case search(String)
    /// A web guest's search (``NodeInput/webSearch(_:ticket:)``): answered within
    /// ``webSearchTimeoutNs`` even when the catalog is slow, since the guest's page waits.
    case webSearch(String, ticket: UInt64)
    case lookup([String])
    /// A guest's request names this catalog track: find it (the DJ never plays a URL a guest sent).
    case requestedTrack(id: String, for: RequestTicket)

    /// How long a web guest's search waits for the catalog (the page waits for the answer).
    public static let webSearchTimeoutNs = Nanos.seconds(8)
}

/// A guest's request while the DJ looks its track up: who asked, and where to answer.
public struct RequestTicket: Hashable, Sendable {
    public var guest: PublicKey
    public var requestID: UInt64
    public var name: String
    /// A node (the answer goes back as a datagram) or the web page (to the waiting HTTP request).
    public var origin: Inbound.Origin
    /// The guest's machine (``MachineID/key``), which the request limits count by.
    public var machine: String

    public init(guest: PublicKey, requestID: UInt64, name: String, origin: Inbound.Origin, machine: String? = nil) {
        self.guest = guest
        self.requestID = requestID
        self.name = name
        self.origin = origin
        self.machine = machine ?? origin.host
    }
}

/// The catalog's answer.
public enum CatalogAnswer: Hashable, Sendable {
    case results(term: String, tracks: [Track])
    case tracks([Track], failure: String?)
    /// The lookup for a guest's request: the track, nil if the catalog has no such track, or
    /// the failure when the catalog could not be asked.
    case requestedTrack(Track?, failure: String?, for: RequestTicket)
    /// A web guest's search in the catalog.
    case webResults(term: String, tracks: [Track], status: CatalogStatus, ticket: UInt64)
}
