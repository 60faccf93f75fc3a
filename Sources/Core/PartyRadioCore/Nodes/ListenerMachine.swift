/// A listener as a state machine: finds the station, tunes in, follows its snapshots, keeps the
/// DJ informed with heartbeats, estimates the DJ clock from time pings, tells the player what
/// to play, and says when the station goes silent or off air. A station withdrawn from DNS-SD
/// without a goodbye (a DJ killed) is waited for: the DJ started again is followed.
public struct ListenerMachine: NodeMachine {
    public struct Configuration: Sendable {
        /// Name, prefix or ID; nil: the only station on the air.
        public var query: String?
        /// How long to look for the station.
        public var timeoutNs: Int64
        public var interfaceName: String
        /// Sent in the hello; the DJ shows it.
        public var listenerName: String
        public var playsAudio: Bool
        /// The key each station name showed before (trust on first use, per state directory).
        public var knownKeys: [String: PublicKey]
        /// `--trust-new-key`: a station that shows another key than before is accepted (and its
        /// new key remembered) instead of refused.
        public var trustNewKey: Bool
        /// Ask the DJ for the group's messages by unicast (the station was looked for in a unicast
        /// DNS-SD domain: it may be beyond a router, where multicast does not go).
        public var wantsUnicast: Bool
        /// What this listener adds to a live station's delay (`--latency-extra`).
        public var liveExtraNs: Int64
        /// A speaker (`partyradio speaker`): who it is and what it kept; nil: a person's listener.
        public var speaker: Speaker?
        /// The key this node signs with: the DJ's batched time pongs name it (``TimePongs``). Nil:
        /// every ping asks for a pong of its own.
        public var key: PublicKey?

        public init(
            query: String?, timeoutNs: Int64, interfaceName: String, listenerName: String, playsAudio: Bool,
            knownKeys: [String: PublicKey] = [:], trustNewKey: Bool = false, wantsUnicast: Bool = false,
            liveExtraNs: Int64 = 0, speaker: Speaker? = nil, key: PublicKey? = nil
        ) {
            self.speaker = speaker
            self.key = key ?? speaker?.key
            self.wantsUnicast = wantsUnicast
            self.liveExtraNs = liveExtraNs
            self.knownKeys = knownKeys
            self.trustNewKey = trustNewKey
            self.query = query
            self.timeoutNs = timeoutNs
            self.interfaceName = interfaceName
            self.listenerName = listenerName
            self.playsAudio = playsAudio
        }
    }

    /// A speaker: a listener without a person, which its station's DJ sets (docs/SPEAKERS.md). It
    /// tells the DJ what it is beside its hellos and heartbeats, takes the DJ's controls, and does
    /// not end when its station goes: it waits for it (or, with none named, for one) to come back.
    public struct Speaker: Sendable {
        public var name: String
        public var room: String
        /// The key this node signs with: a control addressed to a speaker names it.
        public var key: PublicKey
        /// What it kept from its last run.
        public var kept: SpeakerControlState

        public init(name: String, room: String, key: PublicKey, kept: SpeakerControlState = SpeakerControlState()) {
            self.name = name
            self.room = room
            self.key = key
            self.kept = kept
        }
    }

    public static let heartbeatIntervalNs = Nanos.seconds(1)
    public static let helloRetryNs = Nanos.ms(300)
    /// No snapshot for this long and the station is reported silent (snapshots come every 0.5 s).
    public static let silenceNs = Nanos.seconds(2)
    /// How often the live view is refreshed between state changes.
    public static let progressIntervalNs = Nanos.ms(250)
    /// A speaker tells its DJ its status this often (besides with each hello and heartbeat): the DJ
    /// shows a speaker gone within ``SpeakerBook/timeoutNs`` of its last one (docs/SPEAKERS.md).
    public static let speakerStatusIntervalNs = Nanos.ms(500)
    /// Periodic work due within a fifth of its interval, at most this long, is done in the wake-up
    /// at hand rather than in one of its own: a wait never ends exactly on time, and work re-armed
    /// a fraction of a millisecond after other work would otherwise wake the node again that much
    /// later.
    public static let coalesceNs = Nanos.ms(40)

    /// Whether work last done at `last`, every `intervalNs`, is due at `now` (``coalesceNs``).
    static func isDue(last: LocalTime, intervalNs: Int64, now: LocalTime) -> Bool {
        now - last >= intervalNs - min(coalesceNs, intervalNs / 5)
    }

    /// Whether periodic work every `intervalNs` waits for the progress report's wake-up instead of
    /// waking the node itself: while progress is reported, work at least twice as far apart (the
    /// heartbeat, pings once the clock has settled) is done in the first progress wake-up after it
    /// is due, at most ``progressIntervalNs`` late. Each wake-up costs a playing listener about as
    /// much CPU as the work in it; with its own wake-ups the node woke about seven times a second
    /// for this work instead of four (docs/PROTOCOL.md, "Behaviour"). The DJ lets a listener go
    /// only after 3.5 s without a word, and the clock filter takes a ping when it comes.
    private static func ridesOnProgress(_ tuned: Tuned, intervalNs: Int64) -> Bool {
        !tuned.silent && intervalNs >= 2 * progressIntervalNs
    }

    /// The station once tuned in.
    public struct Tuned: Sendable {
        public var station: StationSummary
        public var djAddress: PeerAddress
        public var snapshot: StateSnapshot
        public var lastHeard: LocalTime
        public var lastHello: LocalTime?
        public var lastHeartbeat: LocalTime
        public var lastProgress: LocalTime
        public var lastPing: LocalTime?
        /// When the last time sample the clock could use came (a pong, or an entry of the group's batch).
        public var lastSample: LocalTime?
        /// Whether its pings ask for the group's batch of time pongs.
        var batching = PongBatching()
        /// Time pings sent since tuning in (the clock filter paces the first ones quickly).
        public var pings = 0
        public var silent = false
        public var beats = 0
        /// The return cookie of this listener's address from the DJ's last time pong: a listener
        /// that wants unicast copies shows it in its hellos and heartbeats (``UnicastListeners``).
        public var cookie: UInt64?
    }

    public let configuration: Configuration
    /// Time samples the clock took from the group's batches (``TimePongs``; not those it found
    /// implausible), for the simulation's checks.
    public private(set) var samplesFromBatches = 0
    public private(set) var watch = StationWatch()
    public private(set) var filter: DatagramFilter
    public private(set) var clock = ClockSync()
    public private(set) var tuned: Tuned?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private var finder: StationFinder?
    private var planner: PlaybackPlanner
    private var lastSkip: (notice: TrackSkipped, at: LocalTime)?
    /// What plays next, as the DJ last said.
    public private(set) var upNext: QueueList?
    /// Where the tracks that play next are fetched from, as the DJ last said (catalog tracks).
    public private(set) var nextSources: NextSources?
    /// What the player was last told to fetch ahead.
    public private(set) var prefetching: [String] = []
    /// The station's track the player was last told to fetch at once (its ID).
    private var fetching: String?
    /// The local output is muted (the desktop's pause): the station plays on, unheard here.
    public private(set) var isMuted = false
    /// The local volume, 0–100 (kept while muted).
    public private(set) var volume = 100
    /// A vote sent from this listener (the desktop's "next", the `u`/`d`/`c` keys), resent until
    /// the DJ answers.
    private var pendingVote: Retry<GuestVote>?
    /// The listener's vote as the DJ last counted it, and on which track.
    private var countedVote: (trackID: String, choice: VoteChoice)?
    /// Now-playing tracks this listener refused to hand to its player, counted once per track
    /// as `unplayable_source` (docs/SECURITY.md).
    public private(set) var refused = DropCounters()
    /// The track refused last (counted and logged already while the station keeps sending it).
    private var refusedTrack: Track?
    /// A live station's frames lost on the way, asked for again (docs/LIVE.md, "Resend requests").
    public private(set) var liveGaps: LiveGapTracker
    /// What a live listener saw on the way so far, for `live_status`.
    public var liveNetwork: LiveListenerNetwork {
        LiveListenerNetwork(
            asked: liveGaps.asked, arrivedAfterAsking: liveGaps.arrivedAfterAsking, lost: liveGaps.lost,
            dropped: filter.drops.merged(with: watch.drops).merged(with: refused))
    }

    /// What the listener set for itself, as its view shows it (reported on each change).
    public var settings: ListenerSettings {
        ListenerSettings(
            muted: isMuted, volume: volume, vote: countedVote?.choice, voteTrackID: countedVote?.trackID)
    }
    /// A speaker's settings and the controls that set them (nil: not a speaker).
    public private(set) var speakerState: SpeakerControlState?
    /// The last reason a speaker gave for waiting, said once until another comes.
    private var speakerWaiting: String?
    /// When the speaker last sent its status.
    private var speakerStatusSent: LocalTime?
    /// How the sound output does (``OutputReport``): its last sync error, and why it fails if it does.
    public private(set) var outputSyncErrorNs: Int64?
    public private(set) var outputTrouble = ""
    private var chatSeen: Set<ChatKey> = []
    private var chatOrder: [ChatKey] = []

    /// A vote is resent this often, at most ``voteAttempts`` times, until the DJ acknowledges it.
    public static let voteRetryNs = GuestVote(.up).retryIntervalNs
    public static let voteAttempts = 15

    private struct ChatKey: Hashable, Sendable {
        var sender: String
        var messageID: UInt64
    }

    public init(configuration: Configuration, verifier: any DatagramVerifier) {
        self.configuration = configuration
        filter = DatagramFilter(verifier: verifier)
        watch = StationWatch(verifier: verifier)
        planner = PlaybackPlanner(isEnabled: configuration.playsAudio)
        liveGaps = LiveGapTracker(settings: .init(extraNs: configuration.liveExtraNs))
        speakerState = configuration.speaker?.kept
    }

    /// This node's view of the station clock (nil before tuning in).
    public var view: StationClockView? {
        guard let tuned else { return nil }
        return StationClockView(
            snapshot: tuned.snapshot, estimate: clock.isSynchronized ? clock.estimate : nil, isDJ: false)
    }

    /// The DJ clock at `now`, by the estimate; nil until synchronised.
    public func djTime(at now: LocalTime) -> DJTime? { clock.isSynchronized ? clock.djTime(at: now) : nil }

    public var nextWakeup: LocalTime? {
        guard !isFinished else { return nil }
        guard let tuned else {
            guard let finder else { return nil }
            return [finder.deadline, watch.nextWakeup].compactMap { $0 }.min()
        }
        var wakeups: [LocalTime] = []
        if !Self.ridesOnProgress(tuned, intervalNs: Self.heartbeatIntervalNs) {
            wakeups.append(tuned.lastHeartbeat + Self.heartbeatIntervalNs)
        }
        if !isAnswered(tuned) { wakeups.append((tuned.lastHello ?? tuned.lastHeard) + Self.helloRetryNs) }
        if !tuned.silent {
            wakeups.append(tuned.lastHeard + Self.silenceNs + 1)
            wakeups.append(tuned.lastProgress + Self.progressIntervalNs)
        }
        let ping = pingSchedule(tuned)
        if !Self.ridesOnProgress(tuned, intervalNs: ping.intervalNs) { wakeups.append(ping.due) }
        if let retry = planner.nextRetry { wakeups.append(retry) }
        if let pendingVote { wakeups.append(pendingVote.nextWakeup) }
        if let watchWakeup = watch.nextWakeup { wakeups.append(watchWakeup) }
        if let due = liveGaps.nextDue, let estimate = clock.estimate {
            wakeups.append(estimate.localTime(at: DJTime(ns: due)))
        }
        return wakeups.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        switch input {
        case .start:
            finder = StationFinder(
                query: configuration.query, deadline: now + configuration.timeoutNs,
                interfaceName: configuration.interfaceName)
            out.append(.browse(resolving: nil))
            if let state = speakerState {
                applySpeaker(state.settings, into: &out)
                out.append(.report(.speakerSettings(state.settings)))
            }
        case .discovery(.failed(let message)):
            exitError = NodeError(.discovery, message)
            stop(now: now, into: &out)
            return out
        case .discovery(let event):
            let known = tuned.map { watch.directory.entries[$0.station.id] != nil } ?? false
            _ = watch.handle(event, into: &out)
            if let tuned {
                // Withdrawn when its last service is (even if the watch had stopped listing it
                // after a silence); a service withdrawn while another still announces it is not.
                if case .removed = event, known, watch.directory.entries[tuned.station.id] == nil {
                    stationWithdrawn(into: &out)
                }
                followAddress()
            }
        case .datagram(let bytes, let from, _):
            let policy: SenderPolicy =
                if let tuned { SenderPolicy.pinned(tuned.station.id, tuned.station.advert) } else { watch.policy }
            // A dropped datagram still falls through to the periodic work below, so no deadline is
            // left behind whatever arrives.
            if let inbound = filter.accept(bytes, from: from, at: now, policy: policy, logInto: &out) {
                // The watch hears everything: which address the station speaks from, and the
                // pongs that show another address is the station's.
                _ = watch.handle(inbound, now: now)
                if tuned != nil {
                    followAddress()
                    handle(inbound, now: now, into: &out)
                }
            }
        case .playerFailed(let message):
            out.append(.report(.warning("The player could not play the track (\(message)); retrying.")))
            planner.playerFailed(now: now)
            outputChanged(.failed("the player could not play the track (\(message))"), into: &out)
        case .output(let report):
            outputChanged(report, into: &out)
        case .quit:
            stop(now: now, into: &out)
            return out
        case .listenerControl(.quit):
            stop(now: now, into: &out)
            return out
        case .listenerControl where configuration.speaker != nil:
            break  // a speaker's volume and mute are its DJ's (a desktop's media keys do not move them)
        case .listenerControl(let control):
            perform(control, now: now, into: &out)
        case .timer, .catalog, .web, .webSearch, .djControl, .webDJControl, .libraryRescanned, .live:
            break
        }
        guard !isFinished else { return out }
        _ = watch.tick(now: now, into: &out)
        if tuned == nil { lookForStation(now: now, into: &out) }
        if tuned != nil && !isFinished { keepInTouch(now: now, into: &out) }
        return out
    }

    // MARK: Controls (the desktop's media keys through MPRIS, the terminal's keys, stdin's lines)

    /// One control: mute, unmute, toggle mute (this node's output only), the volume, or a vote
    /// on the track playing now (as `partyradio vote` sends it, from this listener's key).
    private mutating func perform(_ control: ListenerControl, now: LocalTime, into out: inout [Effect]) {
        switch control {
        case .mute: setMuted(true, into: &out)
        case .unmute: setMuted(false, into: &out)
        case .toggleMute: setMuted(!isMuted, into: &out)
        case .volume(let change):
            let level =
                switch change {
                case .to(let target): target
                case .by(let step): volume + step
                }
            volume = min(100, max(0, level))
            if !isMuted { out.append(.player(.volume(volume))) }
            out.append(.report(.notice("Volume \(volume).")))
            out.append(.report(.listenerSettings(settings)))
        case .vote(let choice):
            guard let tuned, let track = tuned.snapshot.nowPlaying else {
                return out.append(.report(.warning("Nothing is playing to vote on.")))
            }
            // The track it names, never another: the listener hears what plays next for itself.
            pendingVote = Retry(
                GuestVote(choice, trackID: track.id, retargets: 0),
                deadline: now + Int64(Self.voteAttempts) * Self.voteRetryNs)
            resendVote(now: now, into: &out)
        case .quit:
            break  // taken in handle(_:at:): it stops the listener
        }
    }

    private mutating func setMuted(_ muted: Bool, into out: inout [Effect]) {
        guard muted != isMuted else { return }
        isMuted = muted
        out.append(.player(.volume(muted ? 0 : volume)))
        out.append(.report(.notice(muted ? "Muted here (the station plays on)." : "Unmuted.")))
        out.append(.report(.listenerSettings(settings)))
    }

    /// Resends the vote the DJ has not answered yet; gives up after ``voteAttempts``.
    private mutating func resendVote(now: LocalTime, into out: inout [Effect]) {
        guard var pending = pendingVote, let tuned else { return }
        switch pending.due(at: now) {
        case .wait:
            pendingVote = pending
        case .send(let message):
            pendingVote = pending
            out.append(.send(message, to: .peer(tuned.djAddress), station: tuned.station.id))
        case .expired:
            pendingVote = nil
            out.append(.report(.warning("The DJ did not answer the vote.")))
        }
    }

    private mutating func answered(_ ack: VoteAck, now: LocalTime, into out: inout [Effect]) {
        guard var pending = pendingVote, let tuned else { return }
        guard case .answered(let answer) = pending.read(.voteAck(ack), from: tuned.station, at: now, into: &out) else {
            return
        }
        pendingVote = nil
        let text = AckText.sentence(answer.ack, title: answer.trackTitle)
        out.append(.report(answer.ack.status == .counted ? .notice(text) : .warning(text)))
        if answer.ack.status == .counted {
            countedVote = (answer.ack.trackID, answer.ack.choice)
            out.append(.report(.listenerSettings(settings)))
        }
    }

    // MARK: Finding

    private mutating func lookForStation(now: LocalTime, into out: inout [Effect]) {
        guard let finder else { return }
        switch finder.check(watch, now: now) {
        case .waiting:
            break
        case .failed(let error) where configuration.speaker != nil:
            // A speaker waits: for its station, for the one station, for a key it may trust.
            speakerWaits(error.description, now: now, into: &out)
        case .failed(let error):
            exitError = error
            isFinished = true
        case .found(let station):
            guard trust(station, into: &out) else { return }
            tuneIn(station, now: now, into: &out)
        }
    }

    /// Trust on first use, as every command that talks to a station checks it (``KeyPins``).
    private mutating func trust(_ station: StationSummary, into out: inout [Effect]) -> Bool {
        let pins = KeyPins(known: configuration.knownKeys, trustNewKey: configuration.trustNewKey)
        guard let refusal = pins.check(station, into: &out) else { return true }
        if configuration.speaker != nil {
            speakerWaiting = nil  // said each time it is seen, so that it is not missed
            out.append(.report(.warning(refusal.description + " Waiting.")))
            return false
        }
        exitError = refusal
        isFinished = true
        return false
    }

    private mutating func tuneIn(_ station: StationSummary, now: LocalTime, into out: inout [Effect]) {
        watch.isQuerying = false
        tuned = Tuned(
            station: station, djAddress: PeerAddress(host: station.address, port: station.port),
            snapshot: station.snapshot, lastHeard: now, lastHello: nil, lastHeartbeat: now, lastProgress: now)
        liveGaps = LiveGapTracker(settings: .init(extraNs: configuration.liveExtraNs))
        out.append(.joinGroup(station.advert.group))
        out.append(.report(.tunedIn(station)))
        out.append(
            .log(.node, "tuned in to \(station.id.hex) at \(PeerAddress(host: station.address, port: station.port))"))
        follow(station.snapshot, now: now, into: &out)
    }

    /// A restarted DJ may come back on a new port: DNS-SD says so, and the watch moves the station
    /// there once a pong signed by its key came from there (``StationDirectory``, "Routes").
    private mutating func followAddress() {
        guard var tuned, let entry = watch.directory.entries[tuned.station.id] else { return }
        let address = entry.followed
        guard address != tuned.djAddress else { return }
        tuned.djAddress = address
        tuned.station.address = address.host
        tuned.station.port = address.port
        tuned.lastHello = nil
        self.tuned = tuned
    }

    // MARK: Tuned in

    private mutating func handle(_ inbound: Inbound, now: LocalTime, into out: inout [Effect]) {
        guard var tuned else { return }
        switch inbound.message {
        case .stateSnapshot(let new):
            tuned.lastHeard = now
            if tuned.silent {
                tuned.silent = false
                out.append(.report(.stationBack(name: new.stationName)))
            }
            let old = tuned.snapshot
            tuned.snapshot = new
            self.tuned = tuned
            follow(new, now: now, into: &out)
            if let change = Self.change(from: old, to: new) {
                self.tuned?.lastProgress = now
                out.append(.report(.state(new, positionNs: position(of: new, now: now), change: change)))
            }
        case .goodbye(let goodbye) where configuration.speaker != nil:
            stationLeftSpeaker(reason: goodbye.reason, now: now, into: &out)
        case .goodbye(let goodbye):
            stationGone(reason: goodbye.reason, into: &out)
        case .speakerControl(let control):
            take(control, now: now, into: &out)
        case .chatLine(let line):
            // Each line comes twice; show each (sender, ID) once.
            let key = ChatKey(sender: line.sender, messageID: line.messageID)
            guard chatSeen.insert(key).inserted else { return }
            chatOrder.append(key)
            if chatOrder.count > 512 { chatSeen.remove(chatOrder.removeFirst()) }  // bounded
            out.append(.report(.chat(line)))
        case .queueList(let list):
            // Resent every few seconds: told only when it changed.
            guard list != upNext else { return }
            upNext = list
            out.append(.report(.upNext(list)))
            planPrefetch(into: &out)
        case .nextSources(let sources):
            guard sources != nextSources else { return }
            nextSources = sources
            planPrefetch(into: &out)
        case .trackSkipped(let notice):
            // The DJ sends each notice twice; say it once (the same track may be skipped again later).
            if let last = lastSkip, last.notice.trackID == notice.trackID, last.notice.reason == notice.reason,
                now - last.at < Nanos.seconds(3)
            {
                return
            }
            lastSkip = (notice, now)
            out.append(.report(.trackSkipped(notice)))
        case .voteAck(let ack):
            answered(ack, now: now, into: &out)
        case .timePong(let pong):
            // A pong from an address the watch asks whether the station is there (another route)
            // answered that question, not one of this listener's pings: it says nothing of the clock.
            if case .node(let from) = inbound.origin, from != tuned.djAddress,
                watch.directory.entries[tuned.station.id]?.candidates.contains(from) == true
            {
                break
            }
            if configuration.wantsUnicast, let cookie = pong.cookie, tuned.cookie != cookie {
                // A new cookie (the first, or the DJ's next epoch): shown at once, so that the
                // copies start (or go on) without waiting for the next heartbeat.
                tuned.cookie = cookie
                tuned.lastHeartbeat = now
                out.append(.send(.heartbeat(heartbeat(tuned)), to: .peer(tuned.djAddress), station: tuned.station.id))
                self.tuned = tuned
            }
            take(
                TimeSample(
                    t1: LocalTime(ns: pong.clientSendNs), t2: DJTime(ns: pong.serverReceiveNs),
                    t3: DJTime(ns: pong.serverSendNs), t4: inbound.receivedAt),
                now: now, into: &out)
        case .timePongs(let pongs):
            // The group's batch: the entries that name this listener's key, each a sample.
            guard let key = configuration.key?.prefix else { break }
            for entry in pongs.entries where entry.guest == key {
                let verdict = take(
                    TimeSample(
                        t1: LocalTime(ns: entry.clientSendNs), t2: DJTime(ns: entry.serverReceiveNs),
                        t3: DJTime(ns: pongs.serverSendNs), t4: inbound.receivedAt),
                    now: now, into: &out)
                // A sample the filter cannot use (the hold made its round trip negative) is no
                // answer: the next ping asks for a pong of its own.
                guard verdict != .implausible else { continue }
                samplesFromBatches += 1
                self.tuned?.batching.batchAnswered()
            }
        case .liveFrame(let frame):
            guard configuration.playsAudio else { break }
            out.append(.live(.frame(frame)))
            liveGaps.received(frame)
        case .liveRepair(let repair):
            guard configuration.playsAudio else { break }
            out.append(.live(.repair(repair)))
            liveGaps.received(repair)
        default:
            break
        }
    }

    /// A time sample from the station (a pong's, or the group batch's): into the clock filter. One
    /// it can use answers the last ping (``Tuned/lastSample``).
    @discardableResult
    private mutating func take(_ sample: TimeSample, now: LocalTime, into out: inout [Effect]) -> ClockSync.Verdict {
        let wasKnown = clock.isSynchronized
        let verdict = clock.add(sample)
        if verdict != .implausible { tuned?.lastSample = now }
        if verdict != .accepted {
            out.append(.log(.clock, "time sample \(verdict) (round trip \(sample.delayNs / 1000) µs)"))
        }
        if let view { out.append(.follow(view)) }
        if !wasKnown && clock.isSynchronized, let estimate = clock.estimate {
            out.append(
                .log(
                    .clock,
                    "synchronised: offset \(estimate.offset(at: now) / 1000) µs, drift "
                        + "\(estimate.driftPPM) ppm from \(clock.samples.count) samples"))
            out += planner.tick(clockKnown: true, now: now).map(Effect.player)
        }
        return verdict
    }

    private mutating func follow(_ snapshot: StateSnapshot, now: LocalTime, into out: inout [Effect]) {
        if let view { out.append(.follow(view)) }
        out += planner.follow(playable(snapshot, into: &out), clockKnown: clock.isSynchronized, now: now)
            .map(Effect.player)
        planPrefetch(into: &out)
    }

    /// Live frames lost on the way, asked of the DJ again while they can still be played; by the
    /// station clock, so only once it is known (the live player takes no frame before either).
    private mutating func askResends(_ tuned: Tuned, now: LocalTime, into out: inout [Effect]) {
        guard liveGaps.missingCount > 0, let station = clock.djTime(at: now) else { return }
        for request in liveGaps.due(at: station.ns) {
            out.append(.send(.liveResend(request), to: .peer(tuned.djAddress), station: tuned.station.id))
        }
    }

    /// The snapshot as this listener's player may take it. The source is what libmpv (and the
    /// media cache, through libcurl) would open, and it comes from the network: only a fetchable
    /// URL (``MediaSource/isFetchable(_:)``, `http`/`https` to a plain host) is taken. A station
    /// naming a local file (`file:///etc/passwd`, `/etc/passwd`), one of libmpv's own protocols
    /// (`av://lavfi:…`, `memory://`) or any other form plays nothing here: the track is left out
    /// of what the player follows (a loaded track stops), counted as `unplayable_source` and
    /// logged once per track. The DJ, which plays its own files, never comes here. A live
    /// station's track (`live:`, ``Track/isLive``) is left out the same way but is no refusal:
    /// its audio comes as live frames, which the live player plays (``Effect/live``, docs/LIVE.md),
    /// not libmpv, so it is neither counted as a bad record nor logged as one.
    private mutating func playable(_ snapshot: StateSnapshot, into out: inout [Effect]) -> StateSnapshot {
        guard let track = snapshot.nowPlaying, !MediaSource.isFetchable(track.source) else { return snapshot }
        if track != refusedTrack, track.isLive {
            refusedTrack = track
            out.append(
                .log(.player, "the station is live: its audio comes as live frames, not through the file player"))
        } else if track != refusedTrack {
            refusedTrack = track
            refused.record(reason: Self.unplayableSource)
            out.append(
                .log(
                    .player,
                    "refused to play \(Self.shown(track.id)): its source is not a web address "
                        + "(\(Self.shown(track.source)))"))
        }
        var withoutTrack = snapshot
        withoutTrack.nowPlaying = nil
        return withoutTrack
    }

    /// The counter of now-playing tracks refused for their source.
    public static let unplayableSource = "unplayable_source"

    /// Text from the station, for a log line: no control or bidirectional characters, at most
    /// 80 characters.
    private static func shown(_ text: String) -> String {
        let cleaned = GuestName.cleaned(text)
        return cleaned.count > 80 ? String(cleaned.prefix(80)) + "…" : cleaned
    }

    /// Tells the player what to fetch ahead when that changed (docs/MEDIA.md, "Fetching ahead"), and
    /// to fetch the station's track at once when it is new: from the first snapshot on, while the
    /// clock is still being synchronised, before the planner asks for the load.
    private mutating func planPrefetch(into out: inout [Effect]) {
        guard planner.isEnabled, let tuned else { return }
        // Only fetchable URLs reach the cache (libcurl opens `file://` too): next sources are
        // checked when decoded; the playing track's, and a library track's derived from it, here.
        let urls = MediaCachePlan.prefetch(current: tuned.snapshot.nowPlaying, upNext: upNext, sources: nextSources)
            .filter(MediaSource.isFetchable)
        if urls != prefetching {
            prefetching = urls
            if !urls.isEmpty { out.append(.player(.prefetch(urls))) }
        }
        if let track = tuned.snapshot.nowPlaying, track.id != fetching, MediaSource.isFetchable(track.source) {
            fetching = track.id
            out.append(.player(.fetch(track.source)))
        }
    }

    /// When the next time ping is due, and the interval it keeps: at once after tuning in, then at
    /// the interval the clock filter asks for (every 10 ms until synchronised, quick while joining,
    /// slow once settled).
    private func pingSchedule(_ tuned: Tuned) -> (due: LocalTime, intervalNs: Int64) {
        guard let last = tuned.lastPing else { return (tuned.lastHeard, 0) }
        let interval = clock.suggestedPingIntervalNs(at: last, pingsSent: tuned.pings)
        return (last + interval, interval)
    }

    private func isAnswered(_ tuned: Tuned) -> Bool {
        tuned.lastHello.map { tuned.lastHeard > $0 } ?? false
    }

    private func hello(_ tuned: Tuned) -> Hello {
        Hello(
            listenerName: configuration.listenerName, wantsUnicast: configuration.wantsUnicast, cookie: tuned.cookie,
            isRepeat: isAnswered(tuned))
    }

    /// A heartbeat, with the live frames found missing since the last one (the DJ sends repairs
    /// while some listener loses frames).
    private mutating func heartbeat(_ tuned: Tuned) -> Heartbeat {
        Heartbeat(wantsUnicast: configuration.wantsUnicast, cookie: tuned.cookie, liveLost: liveGaps.takeLost())
    }

    /// Hello until the DJ has answered, heartbeats after; pings; the silent-station warning; progress.
    private mutating func keepInTouch(now: LocalTime, into out: inout [Effect]) {
        guard var tuned else { return }
        askResends(tuned, now: now, into: &out)
        let station = tuned.station.id
        if !tuned.silent && now - tuned.lastHeard > Self.silenceNs {
            tuned.silent = true
            tuned.lastHello = nil  // say hello again (now, below) and until it comes back
            out.append(.report(.stationSilent(name: tuned.snapshot.stationName)))
        }
        if !isAnswered(tuned) && (tuned.lastHello.map { now - $0 >= Self.helloRetryNs } ?? true) {
            // A speaker's status first: a DJ that knows it keeps the hello out of its guests.
            if let status = speakerStatus(tuned) {
                out.append(.send(status, to: .peer(tuned.djAddress), station: station))
                speakerStatusSent = now
            }
            out.append(.send(.hello(hello(tuned)), to: .peer(tuned.djAddress), station: station))
            tuned.lastHello = now
            tuned.lastHeartbeat = now
        } else if Self.isDue(last: tuned.lastHeartbeat, intervalNs: Self.heartbeatIntervalNs, now: now) {
            // Every fifth beat is a hello: it carries the guest's name, so a DJ that only heard
            // heartbeats (a lost hello, a DJ restart) learns it within seconds.
            tuned.beats += 1
            let beat: Message =
                tuned.beats % 5 == 0 ? .hello(hello(tuned)) : .heartbeat(heartbeat(tuned))
            if let status = speakerStatus(tuned) {
                out.append(.send(status, to: .peer(tuned.djAddress), station: station))
                speakerStatusSent = now
            }
            out.append(.send(beat, to: .peer(tuned.djAddress), station: station))
            tuned.lastHeartbeat = now
        } else if isAnswered(tuned), !tuned.silent,
            speakerStatusSent.map({ Self.isDue(last: $0, intervalNs: Self.speakerStatusIntervalNs, now: now) }) ?? true,
            let status = speakerStatus(tuned)
        {
            // Between heartbeats (the machine wakes for its progress meanwhile).
            out.append(.send(status, to: .peer(tuned.djAddress), station: station))
            speakerStatusSent = now
        }
        let ping = pingSchedule(tuned)
        if Self.isDue(last: ping.due - ping.intervalNs, intervalNs: ping.intervalNs, now: now) {
            // Settled, on the group's link, hearing the station, and the last ping answered: the
            // answer may come in the group's batch (``PongBatching``).
            let batched = tuned.batching.nextPing(
                at: now,
                answered: tuned.lastSample.map { last in tuned.lastPing.map { last > $0 } ?? false } ?? false,
                eligible: configuration.key != nil && !configuration.wantsUnicast && !tuned.silent
                    && ping.intervalNs >= clock.configuration.steadyIntervalNs)
            out.append(
                .send(
                    .timePing(TimePing(clientSendNs: now.ns, batched: batched)), to: .peer(tuned.djAddress),
                    station: station))
            tuned.lastPing = now
            tuned.pings += 1
        }
        if !tuned.silent, Self.isDue(last: tuned.lastProgress, intervalNs: Self.progressIntervalNs, now: now) {
            tuned.lastProgress = now
            out.append(
                .report(.state(tuned.snapshot, positionNs: position(of: tuned.snapshot, now: now), change: .progress)))
        }
        self.tuned = tuned
        resendVote(now: now, into: &out)
        out += planner.tick(clockKnown: clock.isSynchronized, now: now).map(Effect.player)
    }

    // MARK: Speaker

    /// The speaker's status for its DJ (nil: not a speaker).
    private func speakerStatus(_ tuned: Tuned) -> Message? {
        guard let speaker = configuration.speaker, let state = speakerState else { return nil }
        let playing =
            configuration.playsAudio && !tuned.silent
            && (planner.isPlaying || tuned.snapshot.nowPlaying?.isLive == true)
        // A sync error only while it plays (one from before a pause or a silence is no longer true);
        // the wire's Int32 µs hold ±35 minutes.
        let syncErrorUs = outputSyncErrorNs.flatMap { ns -> Int32? in
            playing && outputTrouble.isEmpty ? Int32(clamping: ns / 1000) : nil
        }
        return .speakerStatus(
            SpeakerStatus(
                name: speaker.name, room: speaker.room, settings: state.settings, playing: playing,
                lastControl: state.lastControl, syncErrorUs: syncErrorUs, trouble: outputTrouble))
    }

    /// The output reported how it does: kept for the speaker's status, and a trouble that comes or
    /// goes is told to the DJ at once (not at the next heartbeat).
    private mutating func outputChanged(_ report: OutputReport, into out: inout [Effect]) {
        let troubleBefore = outputTrouble
        switch report {
        case .syncError(let ns):
            outputSyncErrorNs = ns
            outputTrouble = ""
        case .failed(let why):
            outputSyncErrorNs = nil
            outputTrouble = why
        case .recovered:
            outputTrouble = ""
        }
        guard outputTrouble != troubleBefore, let tuned, let status = speakerStatus(tuned) else { return }
        out.append(.send(status, to: .peer(tuned.djAddress), station: tuned.station.id))
    }

    /// A control from the station's DJ (the filter has checked that its key signed it and that it is
    /// no replay): taken if it is for this speaker and newer than what set each setting.
    private mutating func take(_ control: SpeakerControl, now: LocalTime, into out: inout [Effect]) {
        guard let speaker = configuration.speaker, var state = speakerState, let tuned else { return }
        let before = state.settings
        switch state.apply(control, key: speaker.key, room: speaker.room) {
        case .notAddressed:
            return
        case .stale:
            refused.record(reason: Self.staleControl)
            out.append(.log(.node, "a speaker control older than the one that set its settings changed nothing"))
            if let status = speakerStatus(tuned) {
                out.append(.send(status, to: .peer(tuned.djAddress), station: tuned.station.id))
            }
            return
        case .applied(let changed):
            speakerState = state
            out.append(.keepSpeaker(state))
            if changed {
                if state.settings.playerVolume != before.playerVolume || state.settings.delayMs != before.delayMs {
                    applySpeaker(state.settings, into: &out)
                }
                out.append(.report(.speakerSettings(state.settings)))
            }
            // The DJ stops resending once it sees this.
            if let status = speakerStatus(tuned) {
                out.append(.send(status, to: .peer(tuned.djAddress), station: tuned.station.id))
            }
        }
    }

    /// The counter of speaker controls that set nothing: every setting they name was set by a
    /// newer control (reordered on the way, or an old one sent again under a new sequence).
    public static let staleControl = "stale_control"

    /// The player plays at the speaker's level (0 muted) and its delay trim.
    private func applySpeaker(_ settings: SpeakerSettings, into out: inout [Effect]) {
        out.append(.player(.volume(settings.playerVolume)))
        out.append(.player(.delayTrim(Nanos.ms(Int64(settings.delayMs)))))
    }

    /// A speaker that found no station to play, or not the one it wants: it says why once, and
    /// goes on looking.
    private mutating func speakerWaits(_ why: String, now: LocalTime, into out: inout [Effect]) {
        finder = StationFinder(
            query: configuration.query, deadline: now + configuration.timeoutNs,
            interfaceName: configuration.interfaceName)
        guard why != speakerWaiting else { return }
        speakerWaiting = why
        out.append(.report(.warning(why + " Waiting for the station.")))
    }

    /// The DJ said goodbye: a speaker stops playing and waits for its station to come back.
    private mutating func stationLeftSpeaker(reason: String, now: LocalTime, into out: inout [Effect]) {
        let name = tuned?.snapshot.stationName ?? ""
        if let id = tuned?.station.id, let key = tuned?.station.advert.publicKey {
            out.append(.log(.node, "station \(id.hex) said goodbye; waiting for it to come back"))
            filter.forget(key)
        }
        if planner.loaded != nil { out.append(.player(.stop)) }
        planner = PlaybackPlanner(isEnabled: configuration.playsAudio)
        clock = ClockSync()  // it may come back on another machine
        fetching = nil
        prefetching = []
        tuned = nil
        watch.isQuerying = true
        out.append(
            .report(.notice("\(Self.shown(name)) went off air (\(Self.shown(reason))); waiting for it to come back.")))
        finder = StationFinder(
            query: configuration.query, deadline: now + configuration.timeoutNs,
            interfaceName: configuration.interfaceName)
    }

    /// Where the station is now, by the DJ clock as estimated (our own until the estimate is ready).
    private func position(of snapshot: StateSnapshot, now: LocalTime) -> Int64 {
        snapshot.position(at: djTime(at: now) ?? DJTime(ns: now.ns))
    }

    /// The station's DNS-SD record went away without a goodbye: its DJ crashed or was killed, and
    /// Avahi withdrew it. A DJ started again is the same station, so the listener waits for it:
    /// it keeps playing on the last plan, says it is waiting, says hello to the DJ's address until
    /// the DJ answers, and follows it to a new address when DNS-SD resolves it again. Only a
    /// goodbye (or the user) ends it.
    private mutating func stationWithdrawn(into out: inout [Effect]) {
        guard var tuned else { return }
        out.append(.log(.node, "station \(tuned.station.id.hex) withdrawn without a goodbye; waiting for it"))
        tuned.lastHello = nil  // hello again at once, and until it answers
        if !tuned.silent {
            tuned.silent = true
            out.append(.report(.stationSilent(name: tuned.snapshot.stationName)))
        }
        self.tuned = tuned
    }

    private mutating func stationGone(reason: String, into out: inout [Effect]) {
        let name = tuned?.snapshot.stationName ?? ""
        out.append(.report(.stationGone(name: name, reason: reason)))
        if planner.loaded != nil { out.append(.player(.stop)) }
        out.append(.report(.listenerStopped(dropped: filter.drops.merged(with: watch.drops).merged(with: refused))))
        isFinished = true
    }

    private mutating func stop(now: LocalTime, into out: inout [Effect]) {
        if let tuned {
            for _ in 0..<2 { out.append(.send(.leave(Leave()), to: .peer(tuned.djAddress), station: tuned.station.id)) }
            out.append(.report(.listenerStopped(dropped: filter.drops.merged(with: watch.drops).merged(with: refused))))
        }
        if planner.loaded != nil { out.append(.player(.stop)) }
        isFinished = true
    }

    static func change(from old: StateSnapshot?, to new: StateSnapshot) -> NodeEvent.StateChange? {
        guard let old else { return .track }
        if old.nowPlaying?.id != new.nowPlaying?.id || old.queueIndex != new.queueIndex { return .track }
        if old.anchor.isPaused != new.anchor.isPaused { return new.anchor.isPaused ? .paused : .resumed }
        if old.anchor != new.anchor { return .seek }
        if old.tally != new.tally { return .votes }
        if old.listenerCount != new.listenerCount { return .listeners }
        if old.queueLength != new.queueLength { return .queue }
        return nil
    }
}
