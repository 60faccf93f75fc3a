/// The DJ as a state machine: hosts the station, announces it, multicasts its state, counts
/// listeners and votes, answers time pings, and plays along.
///
/// Every DJ instant is both local and DJ time (the DJ's clock is the station clock); the
/// conversion is ``DJTime/init(onTheDJ:)`` and nowhere else.
public struct DJMachine: NodeMachine {
    /// What the runtime found out before the machine starts.
    public struct Configuration: Sendable {
        public var name: String
        public var advert: StationAdvert
        public var queue: [Track]
        /// The UDP port listeners reach the DJ on, and the SRV record's port.
        public var port: UInt16
        public var interfaceName: String
        public var address: String
        /// Whether this node plays the station itself.
        public var playsAudio: Bool
        /// Crowd skip: the share of the room (in percent, 1–100) whose down votes skip the
        /// playing track; 0 turns it off.
        public var crowdSkipPercent: Int
        /// How requests are taken (`--requests`), and how many one guest may have waiting.
        public var requestMode: RequestMode
        public var maxRequestsPerGuest: Int
        /// One guest, one vote: voter keys counted per machine (``MachineID``; `--voters-per-address`),
        /// and the chat lines and waiting requests a machine may have, times this.
        public var votersPerAddress: Int
        /// A vote weighs toward crowd skip only once its machine has been present (listening, or its
        /// page open) this long (`--vote-weight-after`); 0: every counted vote weighs at once.
        public var voteWeightAfterNs: Int64
        /// The station as it was saved (a restart): its queue, position, requests, votes and chat
        /// replace `queue`, and the settings above apply from now on.
        public var saved: SavedStation?
        /// A live station (`--live`): how its frames go out; nil: the station plays its queue.
        public var live: LiveSender.Settings?
        /// A live station's own speakers (off with `--no-audio`): every frame and repair it sends
        /// also goes to its live output (``Effect/live(_:)``), which plays it at the same station
        /// time as every listener does, so the DJ is not heard ahead of the room.
        public var playsLive: Bool

        public init(
            name: String, advert: StationAdvert, queue: [Track], port: UInt16, interfaceName: String,
            address: String, playsAudio: Bool, crowdSkipPercent: Int = 50, requestMode: RequestMode = .open,
            maxRequestsPerGuest: Int = 3, votersPerAddress: Int = 1,
            voteWeightAfterNs: Int64 = DJMachine.defaultVoteWeightAfterNs, saved: SavedStation? = nil,
            live: LiveSender.Settings? = nil, playsLive: Bool = false
        ) {
            self.live = live
            self.playsLive = playsLive
            self.votersPerAddress = max(1, votersPerAddress)
            self.voteWeightAfterNs = max(0, voteWeightAfterNs)
            self.crowdSkipPercent = min(100, max(0, crowdSkipPercent))
            self.requestMode = requestMode
            self.maxRequestsPerGuest = max(1, maxRequestsPerGuest)
            self.saved = saved
            self.name = name
            self.advert = advert
            self.queue = queue
            self.port = port
            self.interfaceName = interfaceName
            self.address = address
            self.playsAudio = playsAudio
        }
    }

    /// A snapshot goes to the group at least this often: twice a second lets observers declare a
    /// station gone after 2.5 s of silence.
    public static let snapshotIntervalNs = Nanos.ms(500)
    /// After a track change the snapshot goes to the group again this soon, ``snapshotRepeats``
    /// times: on a lossy link a lost change would otherwise wait for the next periodic snapshot,
    /// and a listener's player is silent until it hears of the new track.
    public static let snapshotRepeatIntervalNs = Nanos.ms(100)
    public static let snapshotRepeats = 2
    /// The listener list goes to the group at least this often (and at once when it changes).
    public static let rosterIntervalNs = Nanos.seconds(2)
    /// Silent listeners are looked for this often.
    public static let expiryIntervalNs = Nanos.ms(250)
    /// A batched time ping (a settled listener's) waits at most this long for its answer, which
    /// goes to the group with the others of that moment (``TimePongs``): at 20 listeners pinging
    /// twice a second, about eight datagrams a second instead of forty. The hold shortens the round
    /// trip the listener measures by its clock's drift over it (40 µs at 400 ppm between the two
    /// clocks; docs/CLOCK-SYNC.md), so it is kept short.
    public static let pongBatchNs = Nanos.ms(100)
    /// Peers heard this recently get a unicast goodbye (observers do not join the group).
    public static let recentPeerNs = Nanos.seconds(5)
    /// Crowd skip never cuts a track in its first seconds, and needs at least this many down votes.
    public static let crowdSkipAfterNs = Nanos.seconds(10)
    public static let crowdSkipMinVotes: UInt32 = 2
    /// How long a machine is present before its votes weigh, unless the DJ says otherwise: long
    /// enough that a machine made up on the spot cannot skip a track on arrival, short enough that
    /// a guest who just opened the page or tuned in waits a song's intro, not a song.
    public static let defaultVoteWeightAfterNs = Nanos.seconds(20)
    /// The position is saved at least this often while the station plays.
    public static let saveIntervalNs = Nanos.seconds(1)
    /// The DJ's own queue tracks shown after the requests in the list of what plays next.
    public static let upcomingShown = 5
    /// A guest's request waits this long for the catalog's lookup of its ID; then it is answered
    /// "unavailable" (try again), so that a DJ without internet answers within the guest's
    /// patience instead of after DNS and connect timeouts.
    public static let lookupDeadlineNs = Nanos.seconds(1)

    public let configuration: Configuration
    public private(set) var engine: StationEngine
    public private(set) var chat = ChatBook()
    public private(set) var requests: RequestBook
    /// The DJ's local volume, 0–100 (listeners keep their own).
    public private(set) var volume = 100
    /// Crowd skip's share of the room in percent (0: off): `--crowd-skip`, then the DJ's
    /// `crowd-skip N` (its web page's control).
    public private(set) var crowdSkipPercent: Int
    public private(set) var filter: DatagramFilter
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private var planner: PlaybackPlanner
    /// The play that is open, for the DJ's stats (``Effect/record(_:)``).
    private var plays = PlayLog()
    private var lastSnapshotAt = LocalTime(ns: .min / 2)
    /// Repeats of the last track change's snapshot still to send, and when the last went out.
    private var snapshotRepeatsLeft = 0
    private var lastRepeatAt = LocalTime(ns: .min / 2)
    private var lastExpiryAt = LocalTime(ns: .min / 2)
    private var lastRosterAt = LocalTime(ns: .min / 2)
    private var recentPeers: [PeerAddress: LocalTime] = [:]
    /// Batched time pings not answered yet, and when their ``TimePongs`` is due: a window of
    /// ``pongBatchNs`` from its first ping, in which each key has one entry and at most
    /// ``TimePongs/entryRange`` are taken (a full batch goes at once; the window's later pings get
    /// pongs of their own), so that no sender makes the DJ send to the group more than a batch
    /// a window.
    private var pongBatch: [TimePongs.Entry] = []
    private var pongBatchDue: LocalTime?
    private var pongBatchKeys: Set<PublicKey> = []
    /// The DJ's speakers, apart from its guests (docs/SPEAKERS.md).
    public private(set) var speakers = SpeakerBook()
    /// The speaker (by name) or room the speaker keys act on (``DJControl/SpeakerKey``); nil: none.
    public private(set) var speakerPick: String?
    /// Listeners off the multicast group (another subnet): they get the group's messages by unicast.
    public private(set) var unicastListeners = UnicastListeners()
    private var started = false
    /// Something that must survive a crash changed since the last ``Effect/save(_:)``.
    private var unsaved = false
    /// A vote changed the tally since the last snapshot: the group hears it at the end of the
    /// batch (any snapshot before then carries it too).
    private var tallyUntold = false
    private var lastSaveAt = LocalTime(ns: .min / 2)
    /// The names muted guests went by, so that `unmute NAME` finds a guest whose requests were
    /// dropped (not saved: after a restart `unmute` takes the key fingerprint).
    private var mutedNames: [String: String] = [:]
    /// Guests' requests whose catalog lookup is out, with the instant each is answered "unavailable".
    private var lookups: [RequestTicket: LocalTime] = [:]
    /// The machine each guest key last voted, chatted or requested from, so that `mute` reaches the
    /// machine behind a key (a fresh key or name on it stays muted).
    private var guests = GuestMachines()
    /// How long each machine has been present (listening, or its page open): votes weigh after
    /// ``Configuration/voteWeightAfterNs`` of it.
    public private(set) var presence = PresenceBook()
    /// A live station's sender: its frames and repairs to the group (nil: not live).
    public private(set) var live: LiveSender?
    /// A live station whose source went away and has not sent a frame since.
    public private(set) var liveSilent = false
    /// What each listener may have sent again of the live stream (resend requests).
    public private(set) var resendBudget = LiveResendBudget()
    /// What a live DJ sent so far (nil: not live), for `live_sent`.
    public var liveSent: LiveSent? {
        live.map {
            LiveSent(
                frames: $0.framesSent, repairs: $0.repairsSent, shortBlocks: $0.shortBlocks,
                unprotectedBlocks: $0.blocksUnprotected, lossReports: $0.lossReports,
                lossReportsExplained: $0.lossReportsExplained, resent: $0.framesResent,
                resendsMissed: $0.resendsMissed, resendsOverBudget: resendBudget.refused,
                resendsIgnored: resendsIgnored, dropped: filter.drops)
        }
    }
    /// Resend requests not taken: from a sender that is not listening, or to a station not live.
    public private(set) var resendsIgnored: UInt64 = 0
    /// What the MPRIS player a live DJ follows does (`--live-player`); nil: no player, the station
    /// shows ``Track/live``.
    public private(set) var livePlayer: LivePlayerState?
    /// A skip asked of the followed player (its `Next`), and when: the track change it brings ends the
    /// play as that skip, and crowd skip waits for it rather than asking again.
    private var playerSkip: (ending: PlayRecord.Ending, at: LocalTime)?
    /// How long a skip asked of the player waits for its track change.
    public static let playerSkipWaitNs = Nanos.seconds(5)
    /// A followed player's position further than this from the station's moves the station's.
    public static let playerSeekThresholdNs = Nanos.seconds(2)
    /// A live station (`--live`): its now playing is the live segment or its player's track, never a
    /// file, and guests' requests are wishes for the DJ rather than a queue (docs/LIVE.md).
    public var isLive: Bool { configuration.live != nil }

    public var stationID: StationID { configuration.advert.stationID }
    /// A private station's secret (from its join code): its TXT record goes out sealed, and its
    /// filter takes sealed datagrams only.
    private let seal: (any StationSeal)?
    public var isPrivate: Bool { seal != nil }
    /// What the DJ publishes: the advert's TXT strings, or for a private station only that it is one.
    public var publishedTXT: [String] {
        seal.map { configuration.advert.sealedTXTRecord($0) } ?? configuration.advert.txtRecord
    }
    private var group: MulticastGroup { configuration.advert.group }

    /// - Parameters:
    ///   - erasureCode: a live station's FEC (ISA-L on real nodes); needed with ``Configuration/live``.
    public init(
        configuration: Configuration, verifier: any DatagramVerifier, now: LocalTime,
        erasureCode: (any ErasureCode)? = nil
    ) {
        self.configuration = configuration
        if let settings = configuration.live, let erasureCode {
            live = LiveSender(settings: settings, code: erasureCode)
        }
        crowdSkipPercent = configuration.crowdSkipPercent
        let dj = DJTime(onTheDJ: now)
        requests = RequestBook(
            mode: configuration.requestMode, maxPerGuest: configuration.maxRequestsPerGuest,
            votersPerAddress: configuration.votersPerAddress)
        if let saved = configuration.saved {
            engine = StationEngine(
                name: configuration.name, queue: saved.queue, now: dj, startIndex: saved.index,
                startPositionNs: saved.positionNs, paused: saved.paused, interlude: saved.interlude)
            engine.repeatMode = saved.repeatMode
            engine.restoreVotes(saved.votes)
            volume = saved.volume
            chat = saved.chat
            requests = saved.requests
            requests.mode = configuration.requestMode
            requests.maxPerGuest = configuration.maxRequestsPerGuest
            requests.votersPerAddress = configuration.votersPerAddress
        } else {
            engine = StationEngine(name: configuration.name, queue: configuration.queue, now: dj)
        }
        filter = DatagramFilter(verifier: verifier)
        seal = verifier.seal
        planner = PlaybackPlanner(isEnabled: configuration.playsAudio)
    }

    public var nextWakeup: LocalTime? {
        guard started, !isFinished else { return nil }
        var wakeups = [
            lastSnapshotAt + Self.snapshotIntervalNs, lastExpiryAt + Self.expiryIntervalNs,
            lastRosterAt + Self.rosterIntervalNs,
        ]
        if engine.nowPlaying != nil && !engine.isPaused { wakeups.append(lastSaveAt + Self.saveIntervalNs) }
        if snapshotRepeatsLeft > 0 { wakeups.append(lastRepeatAt + Self.snapshotRepeatIntervalNs) }
        if !isLive, let track = engine.nowPlaying, track.durationNs > 0,
            let end = engine.anchor.djTime(whenPositionReaches: track.durationNs)
        {
            wakeups.append(LocalTime(ns: end.ns))
        }
        if let retry = planner.nextRetry { wakeups.append(retry) }
        if let lookup = lookups.values.min() { wakeups.append(lookup) }
        if let skip = playerSkip { wakeups.append(skip.at + Self.playerSkipWaitNs) }
        if let resend = speakers.nextResend { wakeups.append(resend) }
        if let pongBatchDue { wakeups.append(pongBatchDue) }
        return wakeups.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        handle(batch: [(input, now)])
    }

    /// The inputs of one wake-up in turn, then what they changed told once: a batch of votes
    /// gets every acknowledgement but one snapshot of the tally (at the batch's last instant), and
    /// one save before all of it.
    public mutating func handle(batch inputs: [(NodeInput, LocalTime)]) -> [Effect] {
        var out: [Effect] = []
        var last: LocalTime?
        for (index, (input, now)) in inputs.enumerated() where !isFinished {
            take(input, now: now, into: &out)
            if index == inputs.count - 1 && tallyUntold { broadcast(now: now, change: .votes, into: &out) }
            if !isFinished { tick(now: now, into: &out) }  // nothing follows the goodbyes
            last = now
        }
        // Going off air saves too: the next start resumes exactly where the station stopped.
        guard let now = last else { return out }
        let moving = engine.nowPlaying != nil && !engine.isPaused  // a paused position does not change
        let due = unsaved || isFinished || (moving && now - lastSaveAt >= Self.saveIntervalNs)
        if started && due {
            // First: what the effects acknowledge is stored before they go out.
            out.insert(.save(saved(at: now)), at: 0)
            unsaved = false
            lastSaveAt = now
        }
        return out
    }

    private mutating func take(_ input: NodeInput, now: LocalTime, into out: inout [Effect]) {
        switch input {
        case .start:
            started = true
            let c = configuration
            out.append(
                .report(
                    .stationStarted(
                        name: c.name, id: stationID, interface: c.interfaceName, address: c.address, port: c.port,
                        group: group, fingerprint: c.advert.publicKey.fingerprint, queueLength: engine.queue.count,
                        isPrivate: isPrivate)))
            out.append(.publish(name: c.name, port: c.port, txt: publishedTXT))
            if c.saved != nil {
                out.append(
                    .report(.notice("Carrying on from the saved station: same queue, position, requests and votes.")))
                if volume != 100 { out.append(.player(.volume(volume))) }
            }
            reportSettings(into: &out)
            trackChanged(after: .played, tally: Tally(), now: now, into: &out)
            broadcast(now: now, change: .track, into: &out)
        case .datagram(let bytes, let from, let machine):
            // A dropped datagram still falls through to the periodic work below.
            if let inbound = filter.accept(
                bytes, from: from, machine: machine, at: now, policy: .listenersOf(stationID), logInto: &out)
            {
                handle(inbound, now: now, into: &out)
            }
        case .timer:
            break
        case .discovery(let event):
            handle(event, now: now, into: &out)
        case .djControl(let control):
            perform(control, now: now, into: &out)
        case .webDJControl(let control, let ticket):
            let before = out.count
            perform(control, now: now, into: &out)
            out.append(.webReply(ticket: ticket, Self.outcome(of: control, in: out[before...])))
        case .listenerControl:
            break
        case .libraryRescanned(let new, let gone, let warnings):
            for warning in warnings { out.append(.report(.warning(warning))) }
            let goneNote =
                gone == 0 ? "" : "; \(gone) file\(gone == 1 ? " is" : "s are") gone (dropped at the next start)"
            out.append(
                .report(.notice("Library reloaded: \(new.count) new track\(new.count == 1 ? "" : "s")\(goneNote).")))
            enqueue(new, now: now, into: &out)
        case .playerFailed(let message):
            out.append(.report(.warning("The player could not play the track (\(message)); retrying.")))
            planner.playerFailed(now: now)
        case .catalog(let answer):
            handle(answer, now: now, into: &out)
        case .quit:
            goOffAir(now: now, into: &out)
        case .web(let action):
            web(action, now: now, into: &out)
        case .webSearch(let term, let ticket):
            out.append(.catalog(.webSearch(term, ticket: ticket)))
        case .live(let input):
            takeLive(input, now: now, into: &out)
        case .output:
            break  // the DJ's own speakers report to no one
        }
    }

    /// The live capture's frames go to everyone tuned in as they come, each block's repairs after
    /// its last frame; a source that goes away closes its block and the DJ hears it once.
    private mutating func takeLive(_ input: LiveInput, now: LocalTime, into out: inout [Effect]) {
        guard live != nil else { return }
        switch input {
        case .frame(let frame):
            if liveSilent {
                liveSilent = false
                out.append(.report(.notice("The live source is back: the station is on air again.")))
            }
            for message in live!.send(frame) { sendLive(message, into: &out) }
        case .silent(let why):
            for message in live!.flush() { sendLive(message, into: &out) }
            guard !liveSilent else { return }
            liveSilent = true
            out.append(.report(.warning("The station is silent: \(why) Waiting for the live source to come back.")))
        case .failed(let error):
            exitError = error
            goOffAir(now: now, into: &out)
        case .player(let state):
            follow(state, now: now, into: &out)
        }
    }

    /// The followed player's state becomes the station's: another track (a new ID or title) is a
    /// track change as a file station's (tallies reset, the play counted, everyone told at once), a
    /// pause or play pauses or plays the station, a jump in its position moves the station's, and
    /// a player gone (or one with no title) leaves the live segment playing.
    private mutating func follow(_ state: LivePlayerState?, now: LocalTime, into out: inout [Effect]) {
        guard isLive else { return }
        let dj = DJTime(onTheDJ: now)
        let before = livePlayer
        livePlayer = state
        if let state, before?.player != state.player {
            out.append(.report(.notice("Following the player '\(state.player)' for now playing, skip and pause.")))
        } else if state == nil, let before {
            out.append(.report(.notice("The player '\(before.player)' is gone: the station is Live again.")))
        }
        let track = state?.track?.stationTrack ?? .live
        let paused = state.map { $0.status != .playing } ?? false
        let positionNs = (state?.positionUs ?? 0) * 1000
        if engine.nowPlaying?.id != track.id {
            let tally = engine.votes.tally
            let ending = playerSkip.flatMap { now - $0.at <= Self.playerSkipWaitNs ? $0.ending : nil } ?? .played
            playerSkip = nil
            engine.follow(track, positionNs: track.durationMs > 0 ? positionNs : 0, paused: paused, now: dj)
            unsaved = true
            trackChanged(after: ending, tally: tally, now: now, into: &out)
            broadcast(now: now, change: .track, into: &out)
            repeatSnapshot(from: now)
            return
        }
        guard state != nil else { return }  // the live segment's pause is the DJ's own
        if paused != engine.isPaused {
            _ = paused ? engine.pause(now: dj) : engine.resume(now: dj)
            broadcast(now: now, change: paused ? .paused : .resumed, into: &out)
        }
        if track.durationMs > 0, state?.positionUs != nil,
            abs(engine.positionNs(at: dj) - positionNs) > Self.playerSeekThresholdNs
        {
            engine.follow(track, positionNs: positionNs, paused: paused, now: dj)
            broadcast(now: now, change: .seek, into: &out)
        }
    }

    /// A listener's resend request (docs/LIVE.md, "Resend requests"): the frames it names that the
    /// DJ still has go to that listener alone, by unicast, within its budget. Only a node that is
    /// listening (in the roster) is answered, at the address its signed request came from; the
    /// page and anyone else get nothing, so the request cannot aim the stream at a third party
    /// beyond one listener's budget.
    private mutating func resend(
        _ request: LiveResend, to sender: PublicKey, at node: PeerAddress?, now: LocalTime, into out: inout [Effect]
    ) {
        guard let node, live != nil, engine.roster.entries[sender] != nil || speakers.isSpeaker(sender) else {
            resendsIgnored += 1
            return
        }
        let wanted = request.sequences
        let granted = resendBudget.take(wanted.count, for: sender, nowNs: now.ns)
        for frame in live!.resend(Array(wanted.prefix(granted))) { out.append(send(.liveFrame(frame), to: node)) }
    }

    /// A live frame or repair to everyone tuned in, and to the DJ's own live output when it plays.
    private func sendLive(_ message: Message, into out: inout [Effect]) {
        toGroup(message, into: &out)
        guard configuration.playsLive else { return }
        switch message {
        case .liveFrame(let frame): out.append(.live(.frame(frame)))
        case .liveRepair(let repair): out.append(.live(.repair(repair)))
        default: break
        }
    }

    /// The station as it must survive a restart, at `now`.
    public func saved(at now: LocalTime) -> SavedStation {
        // A live station is saved as the live segment: its player says again what plays after a restart.
        isLive && engine.nowPlaying != .live
            ? SavedStation(
                queue: [.live], index: 0, interlude: nil, positionNs: 0, paused: false,
                repeatMode: engine.repeatMode, volume: volume, votes: VoteBook(trackID: Track.live.id),
                requests: requests, chat: chat)
            : SavedStation(
                queue: engine.queue, index: engine.index, interlude: engine.interlude,
                positionNs: engine.positionNs(at: DJTime(onTheDJ: now)), paused: engine.isPaused,
                repeatMode: engine.repeatMode, volume: volume, votes: engine.votes, requests: requests, chat: chat)
    }

    /// The periodic work: track ends, silent listeners, the regular snapshot, player retries.
    private mutating func tick(now: LocalTime, into out: inout [Effect]) {
        guard started else { return }
        let dj = DJTime(onTheDJ: now)
        // A late wakeup (a stalled process, a suspended laptop) may have missed several track ends:
        // catch up to the track playing now in one step.
        var changed = false
        if let skip = playerSkip, now - skip.at > Self.playerSkipWaitNs { playerSkip = nil }
        // A live station's track ends when its player says so (``follow(_:now:into:)``).
        for _ in 0..<(isLive ? 0 : 100_000) {  // bounded; each turn is arithmetic (an hour of 3 s tracks: 1,200)
            let tally = engine.votes.tally
            let request = requests.next
            guard engine.tick(now: dj, request: request.map(StationEngine.Interlude.init)) else { break }
            changed = true
            requestStarted(request, into: &out)
            trackChanged(after: .played, tally: tally, now: now, into: &out)
        }
        if changed {
            unsaved = true
            broadcast(now: now, change: engine.isPaused ? .paused : .track, into: &out)
            if !engine.isPaused { repeatSnapshot(from: now) }
        }
        if let due = pongBatchDue, now >= due {
            sendPongBatch(now: now, into: &out)
            pongBatchDue = nil
            pongBatchKeys.removeAll(keepingCapacity: true)
        }
        if now - lastExpiryAt >= Self.expiryIntervalNs {
            lastExpiryAt = now
            // Peers heard lately, for the goodbye: pruned here, not on every datagram.
            recentPeers = recentPeers.filter { now - $0.value < Self.recentPeerNs }
            unicastListeners.expire(now: now)
            let listening = engine.roster.entries
            resendBudget.prune { listening[$0] != nil }
            presence.expire(now: dj)
            if speakers.expire(now: now) { out.append(.report(.speakers(speakers.list))) }
            if engine.expireListeners(now: dj) {
                out.append(.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true)))
                broadcast(now: now, change: .listeners, into: &out)
            }
        }
        if let skip = crowdSkipDue(at: dj) {
            unsaved = true
            skipTrack(skip, now: now, into: &out)
        }
        for (ticket, deadline) in lookups where deadline <= now {
            lookups[ticket] = nil
            unsaved = true
            out.append(.log(.catalog, "No answer from the catalog within 1 s for request \(ticket.requestID)."))
            resolved(ticket, track: nil, unavailable: true, now: now, into: &out)
        }
        if now - lastSnapshotAt >= Self.snapshotIntervalNs {
            broadcast(now: now, change: .progress, into: &out)
        } else if snapshotRepeatsLeft > 0, now - lastRepeatAt >= Self.snapshotRepeatIntervalNs {
            snapshotRepeatsLeft -= 1
            lastRepeatAt = now
            toGroup(.stateSnapshot(engine.snapshot(now: dj)), into: &out)
        }
        for (control, address) in speakers.resends(now: now) {
            out.append(send(.speakerControl(control), to: address))
        }
        if now - lastRosterAt >= Self.rosterIntervalNs {
            sendRoster(now: now, report: false, into: &out)
            sendUpNext(report: false, into: &out)
        }
        out += planner.tick(clockKnown: true, now: now).map(Effect.player)
    }

    // MARK: Crowd skip

    /// The crowd-skip notice if the rule holds now: crowd skip on, the track playing for at least
    /// ``crowdSkipAfterNs``, at least ``crowdSkipMinVotes`` down votes, and those down votes at
    /// least the configured share of the room (the listeners, or the voters if more voted). Only
    /// votes that weigh count here (``weighedTally(at:)``): the tally shown holds every vote counted.
    public func crowdSkipDue(at dj: DJTime) -> TrackSkipped? {
        let percent = crowdSkipPercent
        // Weighing is a pass over the voters: only once the cheap conditions hold. The weighed down
        // votes are never more than the tally's, nor than the machines present can cast, and the
        // room is never smaller than the listeners.
        let all = engine.votes.tally
        let presentVotes =
            configuration.voteWeightAfterNs > 0
            ? presence.entries.count * configuration.votersPerAddress : Int.max
        guard percent > 0, playerSkip == nil, let track = engine.nowPlaying, !engine.isPaused,
            all.down >= Self.crowdSkipMinVotes,
            presentVotes >= Int(Self.crowdSkipMinVotes)
        else { return nil }
        let listening = listenerRoom
        guard UInt64(all.down) * 100 >= UInt64(percent) * UInt64(listening),
            engine.positionNs(at: dj) >= Self.crowdSkipAfterNs
        else { return nil }
        let tally = weighedTally(at: dj)
        guard tally.down >= Self.crowdSkipMinVotes else { return nil }
        let room = max(UInt32(clamping: listening), tally.up + tally.down)
        guard UInt64(tally.down) * 100 >= UInt64(percent) * UInt64(room) else { return nil }
        return TrackSkipped(trackID: track.id, title: track.title, reason: .crowd, down: tally.down, room: room)
    }

    /// The listeners as crowd skip's room counts them: one per machine (up to `--voters-per-address`
    /// per machine), as votes are counted, so that one machine's fresh keys cannot make the room
    /// too big for the crowd to skip (docs/SECURITY.md, "One machine, many addresses").
    public var listenerRoom: Int { engine.roster.room(votersPerMachine: configuration.votersPerAddress) }

    /// The votes on the playing track that weigh toward crowd skip at `dj`: those of voters whose
    /// machine has been present for ``Configuration/voteWeightAfterNs`` (docs/SECURITY.md, "Votes
    /// weigh after listening").
    public func weighedTally(at dj: DJTime) -> Tally {
        guard configuration.voteWeightAfterNs > 0 else { return engine.votes.tally }
        var tally = Tally()
        for row in engine.votes.voterRows.values where row.choice == .up || row.choice == .down {
            guard row.addresses.contains(where: { weighsInNs(machine: $0, at: dj) == 0 }) else { continue }
            if row.choice == .up { tally.up += 1 } else { tally.down += 1 }
        }
        return tally
    }

    /// How long until a vote from `machine` (its ``MachineID/key``) weighs: 0 when it does now, the
    /// rest of ``Configuration/voteWeightAfterNs`` when the machine is present, all of it when not
    /// (the wait starts when the machine is heard listening or with its page open).
    public func weighsInNs(machine: String, at dj: DJTime) -> Int64 {
        let needed = configuration.voteWeightAfterNs
        return max(0, needed - (presence.presentNs(machine, now: dj) ?? 0))
    }

    /// Moves to the next track and tells everyone why (twice to the group, against loss).
    private mutating func skipTrack(_ notice: TrackSkipped, now: LocalTime, into out: inout [Effect]) {
        if livePlayer != nil {
            // The player moves on; its next track comes back as a track change (``follow(_:now:into:)``).
            playerSkip = (notice.reason == .crowd ? .crowdSkip : .djSkip, now)
            out.append(.livePlayer(.next))
            for _ in 0..<2 { toGroup(.trackSkipped(notice), into: &out) }
            out.append(.report(.trackSkipped(notice)))
            return
        }
        let tally = engine.votes.tally
        // A live station plays no request: guests' requests are wishes the DJ reads (docs/LIVE.md).
        let request = isLive ? nil : requests.next
        guard engine.next(now: DJTime(onTheDJ: now), request: request.map(StationEngine.Interlude.init)) else { return }
        requestStarted(request, into: &out)
        trackChanged(after: notice.reason == .crowd ? .crowdSkip : .djSkip, tally: tally, now: now, into: &out)
        for _ in 0..<2 { toGroup(.trackSkipped(notice), into: &out) }
        out.append(.report(.trackSkipped(notice)))
        broadcast(now: now, change: .track, into: &out)
        repeatSnapshot(from: now)
    }

    // MARK: Datagrams

    /// A web guest's action goes the way the same message from a node goes (the same books, limits
    /// and refusals); only its answer goes back to the HTTP request instead of a datagram.
    private mutating func web(_ action: WebAction, now: LocalTime, into out: inout [Effect]) {
        switch action.message {
        case .vote, .requestSend, .requestVote, .chatSend, .hello, .heartbeat, .leave, .query:
            let inbound = Inbound(
                message: action.message, sender: action.guest, stationID: stationID, sequence: action.sequence,
                origin: .web(ticket: action.ticket, address: action.address), machine: action.machine,
                receivedAt: now)
            handle(inbound, now: now, into: &out)
        default:
            out.append(.log(.wire, "web action of kind \(action.message.kind) ignored"))
        }
    }

    /// The answer to a guest's message: a datagram back to its node, or the web page's HTTP answer
    /// (none when nobody waits for it).
    private func reply(_ message: Message, to origin: Inbound.Origin, into out: inout [Effect]) {
        switch origin {
        case .node(let peer): out.append(send(message, to: peer))
        case .web(let ticket?, _): out.append(.webReply(ticket: ticket, .message(message)))
        case .web(nil, _): break
        }
    }

    private mutating func handle(_ inbound: Inbound, now: LocalTime, into out: inout [Effect]) {
        let sender = inbound.sender
        let dj = DJTime(onTheDJ: now)
        // A node's address: where its snapshot, unicast copies and goodbye go. A web page has none
        // (it reads the page state), and it signs nothing, so it has no session to prepare.
        var node: PeerAddress?
        if case .node(let peer) = inbound.origin {
            node = peer
            recentPeers[peer] = now
        }
        switch inbound.message {
        case .vote, .requestSend, .requestVote, .chatSend:
            // Counted per machine: one whose machine is not known yet waits for its retry (the
            // runtime has asked the kernel for its link-layer address meanwhile).
            guard inbound.machine.isResolved else {
                return out.append(.log(.wire, "a guest at \(inbound.origin.host) waits for its machine to be known"))
            }
            guests.heard(sender.fingerprint, on: inbound.machine.key)
        default:
            break
        }
        switch inbound.message {
        case .hello, .heartbeat:
            // Listening (a node, or a page that plays) makes its machine present; so does a page open
            // on the station (its event stream says so as a web query).
            if inbound.machine.isResolved { presence.heard(inbound.machine.key, now: dj) }
        case .query where node == nil:
            if inbound.machine.isResolved { presence.heard(inbound.machine.key, now: dj) }
        default:
            break
        }
        // A guest or a speaker losing live frames: the blocks get their repairs for a while.
        if case .heartbeat(let beat) = inbound.message, let lost = beat.liveLost {
            live?.lossReported(count: Int(lost))
        }
        // A listener's machine, for crowd skip's room; not known yet: listed but not in the room.
        let listenerMachine = inbound.machine.isResolved ? inbound.machine.key : nil
        if speakers.isSpeaker(sender), let node {
            // A speaker is no guest: its hellos and heartbeats keep it, and a hello is answered, but
            // it is not in the listener list, the listener count or crowd skip's room.
            switch inbound.message {
            case .hello(let hello):
                speakers.keep(sender, now: now)
                unicastListeners.heard(
                    sender, at: node, wantsUnicast: hello.wantsUnicast, cookie: hello.cookie, now: now)
                guard Self.answers(hello, known: true) else { return }
                return out.append(send(.stateSnapshot(engine.snapshot(now: dj)), to: node))
            case .heartbeat(let beat):
                speakers.keep(sender, now: now)
                return unicastListeners.heard(
                    sender, at: node, wantsUnicast: beat.wantsUnicast, cookie: beat.cookie, now: now)
            case .leave:
                unicastListeners.leave(sender)
                if speakers.remove(sender) { out.append(.report(.speakers(speakers.list))) }
                return
            default:
                break
            }
        }
        switch inbound.message {
        case .speakerStatus(let status):
            guard let node else { break }
            if engine.leave(from: sender) {
                // It said hello as a guest first (a status lost, or a DJ from before it restarted).
                out.append(.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true)))
                broadcast(now: now, change: .listeners, into: &out)
            }
            if speakers.heard(status, from: sender, at: node, now: now) {
                out.append(.report(.speakers(speakers.list)))
            }
        case .hello(let hello):
            // The name is the guest's word, so it is cleaned and cut (escape sequences included).
            let name = GuestName.fromNetwork(hello.listenerName)?.value ?? sender.fingerprint
            let known = engine.roster.entries[sender]?.name
            let isNew = engine.hello(from: sender, name: name, machine: listenerMachine, now: dj)
            if let node {
                unicastListeners.heard(
                    sender, at: node, wantsUnicast: hello.wantsUnicast, cookie: hello.cookie, now: now)
                if Self.answers(hello, known: !isNew) {
                    out.append(send(.stateSnapshot(engine.snapshot(now: dj)), to: node))
                }
                if isNew { filter.prepareSession(for: sender) }
            }
            if isNew {
                listenerJoined(name, now: now, into: &out)
            } else if known != name {
                broadcast(now: now, change: .listeners, into: &out)  // renamed
            }
        case .heartbeat(let beat):
            if let node {
                unicastListeners.heard(sender, at: node, wantsUnicast: beat.wantsUnicast, cookie: beat.cookie, now: now)
            }
            if engine.heartbeat(from: sender, machine: listenerMachine, now: dj) {
                if node != nil { filter.prepareSession(for: sender) }
                listenerJoined(engine.roster.entries[sender]?.name ?? sender.fingerprint, now: now, into: &out)
            }
        case .leave:
            unicastListeners.leave(sender)
            if engine.leave(from: sender) {
                out.append(.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true)))
                broadcast(now: now, change: .listeners, into: &out)
            }
        case .query:
            // The list first: an observer lists a station once its snapshot is in, and a `stations`
            // that has seen it may stop right there.
            guard let node else { break }
            out.append(send(.roster(engine.roster.list(now: dj)), to: node))
            out.append(send(.queueList(upNext), to: node))
            out.append(send(.stateSnapshot(engine.snapshot(now: dj)), to: node))
        case .vote(let vote):
            unsaved = true
            let before = engine.votes.tally
            let ack = engine.vote(
                from: sender, trackID: vote.trackID, choice: vote.choice, sequence: inbound.sequence,
                address: inbound.machine.key, votersPerAddress: configuration.votersPerAddress)
            let waitNs = weighsInNs(machine: inbound.machine.key, at: dj)
            if case .web(let ticket?, _) = inbound.origin, ack.status == .counted, ack.choice != .clear, waitNs > 0 {
                // The page is told its vote is in but does not weigh yet (a node's ack has no room
                // for it: docs/PROTOCOL.md, "Vote acknowledgement").
                let ms = UInt32(clamping: (waitNs + Nanos.perMillisecond - 1) / Nanos.perMillisecond)
                out.append(.webReply(ticket: ticket, .voteWeighsLater(ack, inMs: ms)))
            } else {
                reply(.voteAck(ack), to: inbound.origin, into: &out)
            }
            if ack.status == .counted && ack.tally != before {
                out.append(
                    .report(
                        .voteCounted(
                            trackID: ack.trackID, choice: vote.choice, tally: ack.tally, voter: sender.fingerprint,
                            name: engine.roster.name(of: sender))))
                tallyUntold = true
            }
        case .requestSend(let send):
            unsaved = true
            request(send, inbound: inbound, now: now, into: &out)
        case .requestVote(let vote):
            unsaved = true
            let ack = requests.vote(vote, from: sender, address: inbound.machine.key, sequence: inbound.sequence)
            reply(.requestVoteAck(ack), to: inbound.origin, into: &out)
            if ack.status == .counted { sendUpNext(report: true, into: &out) }
        case .chatSend(let send):
            unsaved = true
            let (ack, line) = chat.submit(
                send, from: sender, machine: inbound.machine.key,
                machineLimit: ChatBook.rateLimit * configuration.votersPerAddress, now: dj)
            reply(.chatAck(ack), to: inbound.origin, into: &out)
            if let line {
                for _ in 0..<2 { toGroup(.chatLine(line), into: &out) }
                out.append(.report(.chat(line)))
            }
        case .timePing(let ping):
            // t2 is when the datagram came off the socket; the runtime stamps t3 as it sends. The
            // cookie of the pinger's address goes with it, for a listener that wants unicast copies.
            guard let node else { break }
            // A settled listener on the group's link asks for the group's batch (one t3 for all):
            // taken from a listener in the list or a speaker, once a window per key, while the
            // window has room. One that gets unicast copies cannot hear it, whatever it asks.
            if ping.batched, engine.roster.entries[sender] != nil || speakers.isSpeaker(sender),
                !unicastListeners.addresses.contains(node), pongBatchKeys.count < TimePongs.entryRange.upperBound,
                pongBatchKeys.insert(sender).inserted
            {
                pongBatch.append(
                    .init(guest: sender.prefix, clientSendNs: ping.clientSendNs, serverReceiveNs: inbound.receivedAt.ns)
                )
                if pongBatchDue == nil { pongBatchDue = now + Self.pongBatchNs }
                if pongBatchKeys.count == TimePongs.entryRange.upperBound { sendPongBatch(now: now, into: &out) }
                break
            }
            out.append(
                send(
                    .timePong(
                        TimePong(
                            clientSendNs: ping.clientSendNs, serverReceiveNs: inbound.receivedAt.ns,
                            serverSendNs: now.ns,
                            cookie: unicastListeners.cookie(for: sender, at: node, now: now))),
                    to: node))
        case .liveResend(let request):
            resend(request, to: sender, at: node, now: now, into: &out)
        case .stateSnapshot, .voteAck, .goodbye, .timePong, .trackSkipped, .roster, .chatAck, .chatLine, .requestAck,
            .requestVoteAck, .queueList, .nextSources, .cookieChallenge, .liveFrame,
            .liveRepair, .speakerControl, .timePongs:
            break  // DJ kinds never pass the listener policy
        }
    }

    // MARK: Requests

    /// A guest's request: answered at once when it cannot be queued (or is a retry), resolved
    /// in the DJ's own library, or looked up in the catalog (answered when the lookup returns).
    private mutating func request(_ send: RequestSend, inbound: Inbound, now: LocalTime, into out: inout [Effect]) {
        let guest = inbound.sender
        let name = GuestName.fromNetwork(send.name)?.value ?? guest.fingerprint
        guard !chat.isMuted(guest.fingerprint, machine: inbound.machine.key) else {
            return answer(
                RequestAck(requestID: send.requestID, status: .muted), guest: name, to: inbound.origin, into: &out)
        }
        switch requests.admit(send, from: guest, address: inbound.machine.key, nowNs: DJTime(onTheDJ: now).ns) {
        case .inProgress:
            break
        case .answer(let ack):
            answer(ack, guest: name, to: inbound.origin, into: &out)
        case .resolve:
            let ticket = RequestTicket(
                guest: guest, requestID: send.requestID, name: name, origin: inbound.origin,
                machine: inbound.machine.key)
            switch send.wanted {
            case .library(let words):
                // A live station has no library to match: the words are a wish for the DJ to read.
                let track = isLive ? Self.wish(words) : Self.match(words, in: engine.queue)
                resolved(ticket, track: track, unavailable: false, now: now, into: &out)
            case .catalogID(let id):
                if let known = engine.queue.first(where: { $0.id == id }) {
                    resolved(ticket, track: known, unavailable: false, now: now, into: &out)
                } else if id.isEmpty || !id.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                    // Catalog IDs are digits (as the CLI checks): anything else is no track, not a lookup.
                    resolved(ticket, track: nil, unavailable: false, now: now, into: &out)
                } else {
                    lookups[ticket] = now + Self.lookupDeadlineNs
                    out.append(.catalog(.requestedTrack(id: id, for: ticket)))
                }
            }
        }
    }

    /// A guest's words asked of a live station, as a request the DJ and the page show (it never
    /// plays: the DJ cannot queue into the player it follows); nil when nothing is left of them.
    static func wish(_ words: String) -> Track? {
        guard let title = LivePlayerState.text(.string(words)) else { return nil }
        let id = "wish:" + String(FNV1a64.hash(title.lowercased().utf8), radix: 16)
        return Track(id: id, title: title, artist: "", album: "", durationMs: 0, source: "wish:")
    }

    /// The track of a library request: every word in the title or artist (case ignored), a
    /// whole-title match first, the DJ's own files before catalog tracks.
    static func match(_ words: String, in tracks: [Track]) -> Track? {
        func fold(_ text: String) -> String { text.lowercased() }
        let wanted = fold(words.trimmingWhitespace())
        let terms = wanted.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !terms.isEmpty else { return nil }
        var best: (rank: Int, track: Track)?
        for track in tracks {
            let title = fold(track.title)
            let haystack = title + " " + fold(track.artist)
            guard terms.allSatisfy({ haystack.contains($0) }) else { continue }
            let rank = (title == wanted ? 0 : 2) + (track.id.hasPrefix("local:") ? 0 : 1)
            if best.map({ rank < $0.rank }) ?? true { best = (rank, track) }
        }
        return best?.track
    }

    private mutating func resolved(
        _ ticket: RequestTicket, track: Track?, unavailable: Bool, now: LocalTime, into out: inout [Effect]
    ) {
        guard
            let ack = requests.resolved(
                requestID: ticket.requestID, from: ticket.guest, address: ticket.machine, name: ticket.name,
                track: track, unavailable: unavailable)
        else { return }
        answer(ack, guest: ticket.name, to: ticket.origin, into: &out)
        guard ack.status.isQueued else { return }
        sendUpNext(report: true, into: &out)
        playRequestIfIdle(now: now, into: &out)
    }

    /// A station with nothing on the air (an empty queue, or the end of the queue with repeat
    /// off) plays the next approved request at once.
    private mutating func playRequestIfIdle(now: LocalTime, into out: inout [Effect]) {
        guard !isLive else { return }
        let dj = DJTime(onTheDJ: now)
        let stoppedAtEnd =
            engine.isPaused && engine.repeatMode == .off
            && engine.nowPlaying.map { engine.positionNs(at: dj) >= Int64($0.durationMs) * Nanos.perMillisecond }
                ?? false
        guard engine.nowPlaying == nil || stoppedAtEnd, let next = requests.next else { return }
        let tally = engine.votes.tally
        guard engine.next(now: dj, request: StationEngine.Interlude(next)) else { return }
        if stoppedAtEnd { _ = engine.resume(now: dj) }
        requestStarted(next, into: &out)
        trackChanged(after: .played, tally: tally, now: now, into: &out)
        broadcast(now: now, change: .track, into: &out)
    }

    private func answer(_ ack: RequestAck, guest: String, to origin: Inbound.Origin, into out: inout [Effect]) {
        reply(.requestAck(ack), to: origin, into: &out)
        out.append(.report(.requestAnswered(ack, guest: guest)))
    }

    /// A request went on the air: it leaves the list of what waits.
    private mutating func requestStarted(_ request: SongRequest?, into out: inout [Effect]) {
        guard let request, engine.interlude?.queueID == request.queueID else { return }
        requests.played(request.queueID)
        sendUpNext(report: true, into: &out)
    }

    /// What plays next, as the wire carries it.
    public var upNext: QueueList { requests.list(upcoming: engine.upcoming(limit: Self.upcomingShown)) }

    /// What plays next to the group (and to the user, when it changed), and where the next tracks
    /// are fetched from when a listener cannot work it out itself (a catalog track among them).
    private func sendUpNext(report: Bool, into out: inout [Effect]) {
        let list = upNext
        toGroup(.queueList(list), into: &out)
        if let sources = nextSources { toGroup(.nextSources(sources), into: &out) }
        if report { out.append(.report(.upNext(list))) }
    }

    /// The sources of the tracks that play next (approved requests first, then the DJ's queue, as
    /// ``upNext`` orders them), for listeners to fetch ahead; nil when there is none a listener
    /// could not derive (the DJ's library tracks: `MediaCachePlan.source(ofLocalTrack:after:)`).
    public var nextSources: NextSources? {
        let tracks =
            requests.ordered.filter(\.approved).map(\.track)
            + engine.upcoming(limit: NextSources.Limit.maxEntries)
        let sources = NextSources(tracks: tracks)
        return sources.entries.contains { !$0.trackID.hasPrefix(MediaCachePlan.localPrefix) } ? sources : nil
    }

    /// The DJ's `approve ID` and `drop ID`; `approve next` takes the first request waiting for
    /// approval, `drop next` the request at the top of the list (the keys `a` and `d`).
    private mutating func decide(
        approve: Bool, _ pick: DJControl.RequestPick, now: LocalTime, into out: inout [Effect]
    ) {
        let verb = approve ? "approve" : "drop"
        let id: UInt32
        switch pick {
        case .next:
            guard let next = approve ? requests.ordered.first(where: { !$0.approved }) : requests.ordered.first else {
                let what = approve ? "No request waits for your approval." : "No request waits."
                return out.append(.report(.warning(what)))
            }
            id = next.queueID
        case .number(let number):
            id = number
        }
        let done = approve ? requests.approve(id) : requests.drop(id) != nil
        guard done else {
            let why =
                requests.outcome(of: id).map { "it has already been \($0.rawValue)" }
                ?? (approve && requests.waiting.contains { $0.queueID == id }
                    ? "it is approved already" : "no request waits with that number")
            return out.append(.report(.warning("Cannot \(verb) request #\(id): \(why).")))
        }
        out.append(.report(.notice(approve ? "Approved request #\(id)." : "Dropped request #\(id).")))
        sendUpNext(report: true, into: &out)
        playRequestIfIdle(now: now, into: &out)
    }

    private func send(_ message: Message, to peer: PeerAddress) -> Effect {
        .send(message, to: .peer(peer), station: stationID)
    }

    private mutating func listenerJoined(_ name: String, now: LocalTime, into out: inout [Effect]) {
        out.append(.report(.listenersChanged(count: engine.roster.count, joined: name, left: false)))
        broadcast(now: now, change: .listeners, into: &out)
    }

    /// Whether a hello gets a snapshot of its own: a repeated one from a node the DJ knows, on the
    /// group's link, hears the group's snapshots instead (docs/PROTOCOL.md, "Behaviour").
    private static func answers(_ hello: Hello, known: Bool) -> Bool {
        !known || !hello.isRepeat || hello.wantsUnicast
    }

    /// The batched pings' answers, to the group only (their listeners hear it; ``TimePongs``). The
    /// window stays until it is due.
    private mutating func sendPongBatch(now: LocalTime, into out: inout [Effect]) {
        defer { pongBatch.removeAll(keepingCapacity: true) }
        guard !pongBatch.isEmpty else { return }
        let pongs = TimePongs(serverSendNs: now.ns, entries: pongBatch)
        out.append(.send(.timePongs(pongs), to: .group(group), station: stationID))
    }

    /// A message for everyone tuned in: to the group, and a copy to each listener off the group.
    private func toGroup(_ message: Message, into out: inout [Effect]) {
        out.append(.send(message, to: .group(group), station: stationID))
        for peer in unicastListeners.addresses { out.append(send(message, to: peer)) }
    }

    /// The track changed by itself (played through, crowd skip): the snapshot goes out again soon.
    private mutating func repeatSnapshot(from now: LocalTime) {
        snapshotRepeatsLeft = Self.snapshotRepeats
        lastRepeatAt = now
    }

    /// The state to the group, the DJ's own player, and the user.
    private mutating func broadcast(now: LocalTime, change: NodeEvent.StateChange, into out: inout [Effect]) {
        let dj = DJTime(onTheDJ: now)
        let snapshot = engine.snapshot(now: dj)
        toGroup(.stateSnapshot(snapshot), into: &out)
        lastSnapshotAt = now
        tallyUntold = false
        if change != .progress {
            out.append(.follow(StationClockView(snapshot: snapshot, estimate: nil, isDJ: true)))
        }
        out += planner.follow(snapshot, clockKnown: true, now: now).map(Effect.player)
        out.append(.report(.state(snapshot, positionNs: engine.positionNs(at: dj), change: change)))
        if change == .listeners { sendRoster(now: now, report: true, into: &out) }
    }

    /// The listener list to the group (and to the user, when it changed).
    private mutating func sendRoster(now: LocalTime, report: Bool, into out: inout [Effect]) {
        let roster = engine.roster.list(now: DJTime(onTheDJ: now))
        toGroup(.roster(roster), into: &out)
        lastRosterAt = now
        if report { out.append(.report(.roster(roster))) }
    }

    // MARK: Discovery, catalog, controls

    private mutating func handle(_ event: DiscoveryEvent, now: LocalTime, into out: inout [Effect]) {
        switch event {
        case .renamed(let from, let to):
            engine.rename(to)
            out.append(.report(.stationRenamed(from: from, to: to)))
            broadcast(now: now, change: .progress, into: &out)
        case .published(let name):
            out.append(.report(.stationPublished(name: name)))
        case .failed(let message):
            exitError = NodeError(.discovery, message)
            goOffAir(now: now, into: &out)
        case .daemonLost:
            // The station plays on: listeners that know it keep hearing its snapshots; the runtime
            // registers it again when the daemon is back.
            out.append(.report(.discoveryDaemon(running: false)))
        case .daemonBack:
            out.append(.report(.discoveryDaemon(running: true)))
        case .discovered, .resolved, .unresolved, .removed, .refused, .allForNow:
            break
        }
    }

    private mutating func handle(_ answer: CatalogAnswer, now: LocalTime, into out: inout [Effect]) {
        switch answer {
        case .results(let term, let tracks):
            out.append(.report(.searchResults(term: term, tracks: tracks)))
        case .requestedTrack(let track, let failure, let ticket):
            if let failure { out.append(.log(.catalog, failure)) }
            // After the deadline the guest has its answer already; a retry asks again.
            guard lookups.removeValue(forKey: ticket) != nil else { return }
            unsaved = true
            resolved(ticket, track: track, unavailable: track == nil && failure != nil, now: now, into: &out)
        case .tracks(let tracks, let failure):
            if let failure { out.append(.report(.warning(failure))) }
            enqueue(tracks, now: now, into: &out)
        case .webResults(let term, let tracks, let status, let ticket):
            webSearchAnswered(term, catalog: tracks, status: status, ticket: ticket, into: &out)
        }
    }

    /// Tracks added at the end of the queue (catalog tracks the DJ added, music new to the library).
    private mutating func enqueue(_ tracks: [Track], now: LocalTime, into out: inout [Effect]) {
        unsaved = true
        guard engine.enqueue(tracks, now: DJTime(onTheDJ: now)) else { return }
        out.append(.report(.queued(tracks: tracks, queueLength: engine.queue.count)))
        let first = engine.queue.count == tracks.count
        if first { trackChanged(after: .played, tally: Tally(), now: now, into: &out) }
        broadcast(now: now, change: first ? .track : .queue, into: &out)
    }

    /// The most results a web guest's search shows from the DJ's queue, and from the catalog.
    public static let webSearchLibraryResults = 10
    public static let webSearchCatalogResults = 15

    /// A web guest's search is answered once the catalog has: the DJ's own queue first (every
    /// word in the title, artist or album, case ignored), then the catalog's tracks not in it.
    private func webSearchAnswered(
        _ term: String, catalog: [Track], status: CatalogStatus, ticket: UInt64, into out: inout [Effect]
    ) {
        let terms = term.lowercased().split(whereSeparator: \.isWhitespace)
        var seen = Set<String>()
        var library: [Track] = []
        for track in engine.queue where library.count < Self.webSearchLibraryResults && !seen.contains(track.id) {
            let haystack = (track.title + " " + track.artist + " " + track.album).lowercased()
            guard !terms.isEmpty, terms.allSatisfy({ haystack.contains($0) }) else { continue }
            seen.insert(track.id)
            library.append(track)
        }
        var found: [Track] = []
        for track in catalog.prefix(Self.webSearchCatalogResults) where !seen.contains(track.id) {
            seen.insert(track.id)
            found.append(track)
        }
        let results = WebSearchResults(library: library, catalog: found, catalogStatus: status)
        out.append(.webReply(ticket: ticket, .searchResults(results)))
    }

    /// `speaker NAME|ROOM …`: the speakers with that name, else that room's, are sent the control
    /// (and again until their status shows it: ``SpeakerBook``).
    private mutating func setSpeakers(
        _ who: String, _ change: DJControl.SpeakerChange, now: LocalTime, into out: inout [Effect]
    ) {
        let pick = speakers.pick(who)
        let keys: [PublicKey]
        let target: SpeakerControl.Target
        let shownName: String
        switch pick {
        case .none:
            let known = speakers.list.map { $0.room.isEmpty ? $0.name : "\($0.name) (\($0.room))" }
            let list = known.isEmpty ? "no speaker is tuned in" : "speakers: \(known.joined(separator: ", "))"
            return out.append(
                .report(.warning("No speaker or room is called '\(GuestName.cleaned(who))' (\(list)).")))
        case .speakers(let named):
            keys = named
            target = .speaker(named[0])
            shownName = speakers.entries[named[0]]?.name ?? who
        case .room(let room, let members):
            keys = members
            target = .room(room)
            shownName = "room \(room)"
        }
        var control = SpeakerControl(
            controlID: speakers.nextControlID(now: now), target: target, fields: [], settings: SpeakerSettings())
        switch change {
        case .volume(let level):
            control.fields = .volume
            control.settings.volume = level
        case .mute(let on):
            control.fields = .mute
            control.settings.muted = on
        case .delay(let ms):
            control.fields = .delay
            control.settings.delayMs = ms
        }
        let perSpeaker = speakers.want(control, of: keys, now: now)
        if case .room = target {
            // One control for the room, the same bytes to each of its speakers.
            for key in keys {
                if let entry = speakers.entries[key] { out.append(send(.speakerControl(control), to: entry.address)) }
            }
        } else {
            for (each, address) in perSpeaker { out.append(send(.speakerControl(each), to: address)) }
        }
        let count = keys.count > 1 ? " (\(keys.count) speakers)" : ""
        out.append(.report(.notice("Speaker \(shownName)\(count): \(change).")))
    }

    /// The speaker keys: `k` picks the next speaker (by name) or room, in the order the list shows
    /// them, then none; `[`/`]` and `M` set the pick's volume and mute from what it shows now (with
    /// what was asked and not confirmed yet: two quick presses are two steps).
    private mutating func speakerKey(_ key: DJControl.SpeakerKey, now: LocalTime, into out: inout [Effect]) {
        let list = speakers.list
        var choices: [String] = []
        for name in list.map(\.name) + list.map(\.room) where !name.isEmpty {
            if !choices.contains(where: { SpeakerControlState.sameName($0, name) }) { choices.append(name) }
        }
        let isRoom = { (words: String) in !list.contains { SpeakerControlState.sameName($0.name, words) } }
        if case .pick = key {
            guard !choices.isEmpty else {
                speakerPick = nil
                return out.append(.report(.warning("No speaker is tuned in.")))
            }
            let at = speakerPick.flatMap { pick in choices.firstIndex { SpeakerControlState.sameName($0, pick) } }
            let next = at.map { $0 + 1 } ?? 0
            guard next < choices.count else {
                speakerPick = nil
                return out.append(.report(.notice("The speaker keys act on no speaker; k picks one.")))
            }
            speakerPick = choices[next]
            let shown = GuestName.cleaned(choices[next])
            return out.append(
                .report(
                    .notice(
                        "The speaker keys act on \(isRoom(choices[next]) ? "room " : "")\(shown): ] louder, [ softer, M mute."
                    )))
        }
        guard let pick = speakerPick else {
            return out.append(.report(.warning("Pick a speaker first: k picks the next speaker or room.")))
        }
        let keys: [PublicKey]
        switch speakers.pick(pick) {
        case .none:
            speakerPick = nil
            return out.append(.report(.warning("\(GuestName.cleaned(pick)) is gone; k picks another speaker.")))
        case .speakers(let named): keys = named
        case .room(_, let members): keys = members
        }
        let settings = keys.map { speakers.shownSettings(of: $0) }
        switch key {
        case .volume(let step):
            let level = (settings.map(\.volume).max() ?? 0) + min(100, max(-100, step))
            setSpeakers(pick, .volume(min(100, max(0, level))), now: now, into: &out)
        case .toggleMute:
            setSpeakers(pick, .mute(!settings.allSatisfy(\.muted)), now: now, into: &out)
        case .pick:
            break
        }
    }

    /// One of the DJ's controls (its arguments are checked where it was typed: ``DJControl``).
    private mutating func perform(_ control: DJControl, now: LocalTime, into out: inout [Effect]) {
        let dj = DJTime(onTheDJ: now)
        unsaved = true
        switch control {
        case .speaker(let who, let change):
            setSpeakers(who, change, now: now, into: &out)
        case .speakerKey(let key):
            unsaved = false
            speakerKey(key, now: now, into: &out)
        case .next:
            guard let track = engine.nowPlaying else { return }
            let tally = engine.votes.tally
            skipTrack(
                TrackSkipped(
                    trackID: track.id, title: track.title, reason: .dj, down: tally.down,
                    room: max(UInt32(clamping: listenerRoom), tally.up + tally.down)), now: now, into: &out)
        case .previous where livePlayer != nil:
            out.append(.livePlayer(.previous))
        case .pause where livePlayer != nil:
            out.append(.livePlayer(.pause))
        case .resume where livePlayer != nil:
            out.append(.livePlayer(.play))
        case .seek(let positionNs) where livePlayer != nil:
            // The player seeks; its position comes back as the station's with its next state.
            guard let track = livePlayer?.track, track.trackID.hasPrefix("/") else {
                out.append(.report(.warning("Cannot seek: the player names no track to seek in; seek in the player.")))
                break
            }
            let lengthUs = track.lengthUs > 0 ? track.lengthUs : Int64.max
            out.append(
                .livePlayer(
                    .setPosition(trackID: track.trackID, positionUs: min(max(0, positionNs / 1000), lengthUs))))
        case .previous:
            let tally = engine.votes.tally
            if engine.previous(now: dj) {
                trackChanged(after: .djSkip, tally: tally, now: now, into: &out)
                broadcast(now: now, change: .track, into: &out)
            }
        case .pause:
            if engine.pause(now: dj) { broadcast(now: now, change: .paused, into: &out) }
        case .resume:
            if engine.resume(now: dj) { broadcast(now: now, change: .resumed, into: &out) }
        case .toggle:
            perform(engine.isPaused ? .resume : .pause, now: now, into: &out)
        case .shuffle:
            var random = SplitMix64(seed: UInt64(bitPattern: now.ns))
            if engine.shuffleUpcoming(using: &random) {
                out.append(.report(.notice("Shuffled the \(engine.queue.count - engine.index - 1) tracks to come.")))
                broadcast(now: now, change: .queue, into: &out)
            } else {
                out.append(.report(.warning("Nothing to shuffle: fewer than two tracks are still to come.")))
            }
        case .setRepeat(let mode):
            engine.repeatMode = mode ?? engine.repeatMode.next
            reportSettings(into: &out)
        case .volume(let change):
            switch change {
            case .to(let level): volume = min(100, max(0, level))
            case .by(let step): volume = min(100, max(0, volume + min(100, max(-100, step))))
            }
            out.append(.player(.volume(volume)))
            reportSettings(into: &out)
        case .seek(let positionNs):
            if engine.seek(toNs: positionNs, now: dj) { broadcast(now: now, change: .seek, into: &out) }
        case .search(let term):
            out.append(.catalog(.search(term)))
        case .add(let ids):
            out.append(.catalog(.lookup(ids)))
        case .mute(let who):
            setMuted(true, who, into: &out)
        case .unmute(let who):
            setMuted(false, who, into: &out)
        case .qr(let forDJ):
            unsaved = false
            out.append(.report(.webQR(forDJ: forDJ)))
        case .crowdSkip(let percent):
            crowdSkipPercent = min(100, max(0, percent))
            out.append(
                .report(
                    .notice(
                        crowdSkipPercent == 0
                            ? "Crowd skip is off."
                            : "Crowd skip: \(crowdSkipPercent) % of the room voting down skips a track.")))
            reportSettings(into: &out)
        case .approve(let pick):
            decide(approve: true, pick, now: now, into: &out)
        case .drop(let pick):
            decide(approve: false, pick, now: now, into: &out)
        case .quit:
            goOffAir(now: now, into: &out)
        }
    }

    /// What the DJ's terminal said of a control, for the page that sent it: its first warning
    /// (refused), else its first notice, else that it was done.
    static func outcome(of control: DJControl, in effects: ArraySlice<Effect>) -> WebReply {
        for case .report(.warning(let text)) in effects { return .djOutcome(text, ok: false) }
        for case .report(.notice(let text)) in effects { return .djOutcome(text, ok: true) }
        return .djOutcome("Done: \(control.description).", ok: true)
    }

    /// `mute NAME` and `unmute NAME`: a guest is known by the name it gave (listening or chatting)
    /// or its key's fingerprint.
    private mutating func setMuted(_ mute: Bool, _ who: String, into out: inout [Effect]) {
        let known =
            engine.roster.entries.map { (name: $0.value.name, fingerprint: $0.key.fingerprint) }
            + chat.lines.map { (name: $0.name, fingerprint: $0.sender) }
            + requests.waiting.map { (name: $0.requesterName, fingerprint: $0.requester.fingerprint) }
            // A muted guest may have nothing left in the lists above: unmute still finds them.
            + chat.muted.map { (name: mutedNames[$0] ?? "", fingerprint: $0) }
        // A name is one guest, whatever keys it used (`listen` and `chat` sign with two), as long as
        // those keys are on one machine; a fingerprint prefix must name one key.
        let byName = Set(known.filter { $0.name == who }.map(\.fingerprint))
        let byPrint = Set(known.filter { $0.fingerprint.hasPrefix(who.lowercased()) }.map(\.fingerprint))
        let targets = byName.isEmpty ? byPrint : byName
        guard !targets.isEmpty, !byName.isEmpty || byPrint.count == 1 else {
            let problem = targets.isEmpty ? "No guest is called" : "Several guests match"
            return out.append(.report(.warning("\(problem) '\(who)'; use the name or key fingerprint the list shows.")))
        }
        // Names are the guests' own word, and two guests may give the same one: a name that stands
        // for keys on several machines is refused, with the fingerprints to choose from, rather than
        // muting (or unmuting) guests the DJ did not mean.
        if byName.count > 1, let choices = Self.ambiguous(byName, machine: machine(ofFingerprint:)) {
            let verb = mute ? "mute" : "unmute"
            return out.append(
                .report(
                    .warning(
                        "\(choices.count) guests are called '\(who)'; say which with '\(verb) FINGERPRINT': "
                            + choices.joined(separator: "; ") + ".")))
        }
        guard mute else {
            for fingerprint in targets {
                chat.unmute(fingerprint: fingerprint)
                if let machine = guests.machine(of: fingerprint) ?? chat.mutedMachine(of: fingerprint) {
                    chat.unmute(machine: machine)
                }
                mutedNames[fingerprint] = nil
            }
            return out.append(.report(.notice("Unmuted '\(who)': chat and requests are open to them again.")))
        }
        var dropped: [SongRequest] = []
        for fingerprint in targets.sorted() {
            chat.mute(fingerprint: fingerprint, machine: guests.machine(of: fingerprint))
            mutedNames[fingerprint] = known.first { $0.fingerprint == fingerprint && !$0.name.isEmpty }?.name
            // A muted guest's waiting requests go too: muting is how a DJ stops a spammer.
            dropped += requests.dropAll(fingerprint: fingerprint)
        }
        // Whatever else waits from a muted machine (its other keys) goes too.
        for machine in chat.mutedMachines {
            dropped += requests.dropAll(fromAddress: machine)
        }
        out.append(
            .report(
                .notice(
                    "Muted '\(who)': no chat or requests from them"
                        + (dropped.isEmpty ? "." : "; dropped their \(dropped.count) waiting request(s)."))))
        if !dropped.isEmpty { sendUpNext(report: true, into: &out) }
    }

    /// The machine (``MachineID/key``) a guest key was last heard from, as far as the DJ knows:
    /// voting, chatting or requesting, listening, or when it was muted.
    private func machine(ofFingerprint fingerprint: String) -> String? {
        guests.machine(of: fingerprint)
            ?? engine.roster.entries.first(where: { $0.key.fingerprint == fingerprint })?.value.machine
            ?? chat.mutedMachine(of: fingerprint)
    }

    /// When `fingerprints` (all under one name) are on more than one machine, one line per machine
    /// saying its fingerprints and where it is, for the DJ to choose from; nil when they are one
    /// guest. A key whose machine is not known counts as a guest of its own.
    static func ambiguous(_ fingerprints: Set<String>, machine: (String) -> String?) -> [String]? {
        var byMachine: [String: [String]] = [:]
        for fingerprint in fingerprints.sorted() {
            byMachine[machine(fingerprint).map { "machine:" + $0 } ?? "key:" + fingerprint, default: []]
                .append(fingerprint)
        }
        guard byMachine.count > 1 else { return nil }
        return byMachine.sorted { $0.value[0] < $1.value[0] }.map { place, prints in
            let shown =
                place.hasPrefix("machine:link:")
                ? "link-layer " + place.dropFirst("machine:link:".count)
                : place.hasPrefix("machine:") ? String(place.dropFirst("machine:".count)) : "machine not known"
            return prints.joined(separator: ", ") + " (\(shown))"
        }
    }

    // MARK: Stats

    /// The track changed (or started again): the play before it ended as `ending` with `tally`,
    /// and a play of the track now on opens, unless the station stopped at the end of its queue.
    private mutating func trackChanged(
        after ending: PlayRecord.Ending, tally: Tally, now: LocalTime, into out: inout [Effect]
    ) {
        let dj = DJTime(onTheDJ: now)
        let position = engine.positionNs(at: dj)
        let closed: PlayRecord?
        if let track = engine.nowPlaying, !(engine.isPaused && track.durationNs > 0 && position >= track.durationNs) {
            // A late tick starts the track where it would have started, not at the tick.
            closed = plays.started(
                track, at: DJTime(ns: dj.ns - position), listeners: engine.roster.count, previousEnding: ending,
                tally: tally, requestedBy: engine.interlude?.requesterName)
        } else {
            closed = plays.close(ending, tally: tally)
        }
        if let closed { out.append(.record(closed)) }
    }

    /// The DJ's own settings, for its live view and `--json-events`.
    private func reportSettings(into out: inout [Effect]) {
        out.append(.report(.djSettings(repeatMode: engine.repeatMode.rawValue, volume: volume)))
    }

    /// Goodbye to the group (three times, against loss) and to every peer heard in the last
    /// seconds; the runtime withdraws the DNS-SD record as the machine finishes.
    private mutating func goOffAir(now: LocalTime, into out: inout [Effect]) {
        let goodbye = Message.goodbye(Goodbye(reason: "The DJ ended the station."))
        for _ in 0..<3 { out.append(.send(goodbye, to: .group(group), station: stationID)) }
        // Listeners off the group are heard every second, so the recent peers below include them.
        for (peer, lastHeard) in recentPeers.sorted(by: { $0.key.description < $1.key.description })
        where now - lastHeard < Self.recentPeerNs {
            out.append(send(goodbye, to: peer))
        }
        if planner.loaded != nil { out.append(.player(.stop)) }
        if let play = plays.close(.stopped, tally: engine.votes.tally) { out.append(.record(play)) }
        out.append(.report(.stationStopped(name: engine.name, dropped: filter.drops)))
        isFinished = true
    }
}
