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

        public init(
            name: String, advert: StationAdvert, queue: [Track], port: UInt16, interfaceName: String,
            address: String, playsAudio: Bool, crowdSkipPercent: Int = 50
        ) {
            self.crowdSkipPercent = min(100, max(0, crowdSkipPercent))
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
    /// The listener list goes to the group at least this often (and at once when it changes).
    public static let rosterIntervalNs = Nanos.seconds(2)
    /// Silent listeners are looked for this often.
    public static let expiryIntervalNs = Nanos.ms(250)
    /// Peers heard this recently get a unicast goodbye (observers do not join the group).
    public static let recentPeerNs = Nanos.seconds(5)
    /// Crowd skip never cuts a track in its first seconds, and needs at least this many down votes.
    public static let crowdSkipAfterNs = Nanos.seconds(10)
    public static let crowdSkipMinVotes: UInt32 = 2

    public let configuration: Configuration
    public private(set) var engine: StationEngine
    public private(set) var chat = ChatBook()
    /// The DJ's local volume, 0–100 (listeners keep their own).
    public private(set) var volume = 100
    public private(set) var filter: DatagramFilter
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private var planner: PlaybackPlanner
    /// The play that is open, for the DJ's stats (``Effect/record(_:)``).
    private var plays = PlayLog()
    private var lastSnapshotAt = LocalTime(ns: .min / 2)
    private var lastExpiryAt = LocalTime(ns: .min / 2)
    private var lastRosterAt = LocalTime(ns: .min / 2)
    private var recentPeers: [PeerAddress: LocalTime] = [:]
    private var started = false

    public var stationID: StationID { configuration.advert.stationID }
    private var group: MulticastGroup { configuration.advert.group }

    public init(configuration: Configuration, verifier: any DatagramVerifier, now: LocalTime) {
        self.configuration = configuration
        engine = StationEngine(name: configuration.name, queue: configuration.queue, now: DJTime(onTheDJ: now))
        filter = DatagramFilter(verifier: verifier)
        planner = PlaybackPlanner(isEnabled: configuration.playsAudio)
    }

    public var nextWakeup: LocalTime? {
        guard started, !isFinished else { return nil }
        var wakeups = [
            lastSnapshotAt + Self.snapshotIntervalNs, lastExpiryAt + Self.expiryIntervalNs,
            lastRosterAt + Self.rosterIntervalNs,
        ]
        if let track = engine.nowPlaying, track.durationNs > 0,
            let end = engine.anchor.djTime(whenPositionReaches: track.durationNs)
        {
            wakeups.append(LocalTime(ns: end.ns))
        }
        if let retry = planner.nextRetry { wakeups.append(retry) }
        return wakeups.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        switch input {
        case .start:
            started = true
            let c = configuration
            out.append(
                .report(
                    .stationStarted(
                        name: c.name, id: stationID, interface: c.interfaceName, address: c.address, port: c.port,
                        group: group, fingerprint: c.advert.publicKey.fingerprint, queueLength: engine.queue.count)))
            out.append(.publish(name: c.name, port: c.port, txt: c.advert.txtRecord))
            reportSettings(into: &out)
            trackChanged(after: .played, tally: Tally(), now: now, into: &out)
            broadcast(now: now, change: .track, into: &out)
        case .datagram(let bytes, let from):
            // A dropped datagram still falls through to the periodic work below.
            if let inbound = filter.accept(bytes, from: from, at: now, policy: .listenersOf(stationID), logInto: &out) {
                handle(inbound, now: now, into: &out)
            }
        case .timer:
            break
        case .discovery(let event):
            handle(event, now: now, into: &out)
        case .command(let line):
            perform(line, now: now, into: &out)
        case .playerFailed(let message):
            out.append(.report(.warning("The player could not play the track (\(message)); retrying.")))
            planner.playerFailed(now: now)
        case .catalog(let answer):
            handle(answer, now: now, into: &out)
        case .quit:
            goOffAir(now: now, into: &out)
            return out
        }
        if !isFinished { tick(now: now, into: &out) }  // nothing follows the goodbyes
        return out
    }

    /// The periodic work: track ends, silent listeners, the regular snapshot, player retries.
    private mutating func tick(now: LocalTime, into out: inout [Effect]) {
        guard started else { return }
        let dj = DJTime(onTheDJ: now)
        // A late wakeup (a stalled process, a suspended laptop) may have missed several track ends:
        // catch up to the track playing now in one step.
        var changed = false
        for _ in 0..<100_000 {  // bounded; each turn is arithmetic only (an hour of 3 s tracks is 1,200)
            let tally = engine.votes.tally
            guard engine.tick(now: dj) else { break }
            changed = true
            trackChanged(after: .played, tally: tally, now: now, into: &out)
        }
        if changed { broadcast(now: now, change: engine.isPaused ? .paused : .track, into: &out) }
        if now - lastExpiryAt >= Self.expiryIntervalNs {
            lastExpiryAt = now
            // Peers heard lately, for the goodbye: pruned here, not on every datagram.
            recentPeers = recentPeers.filter { now - $0.value < Self.recentPeerNs }
            if engine.expireListeners(now: dj) {
                out.append(.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true)))
                broadcast(now: now, change: .listeners, into: &out)
            }
        }
        if let skip = crowdSkipDue(at: dj) { skipTrack(skip, now: now, into: &out) }
        if now - lastSnapshotAt >= Self.snapshotIntervalNs { broadcast(now: now, change: .progress, into: &out) }
        if now - lastRosterAt >= Self.rosterIntervalNs { sendRoster(now: now, report: false, into: &out) }
        out += planner.tick(clockKnown: true, now: now).map(Effect.player)
    }

    // MARK: Crowd skip

    /// The crowd-skip notice if the rule holds now: crowd skip on, the track playing for at least
    /// ``crowdSkipAfterNs``, at least ``crowdSkipMinVotes`` down votes, and those down votes at
    /// least the configured share of the room (the listeners, or the voters if more voted).
    public func crowdSkipDue(at dj: DJTime) -> TrackSkipped? {
        let percent = configuration.crowdSkipPercent
        let tally = engine.votes.tally
        guard percent > 0, let track = engine.nowPlaying, !engine.isPaused, tally.down >= Self.crowdSkipMinVotes,
            engine.positionNs(at: dj) >= Self.crowdSkipAfterNs
        else { return nil }
        let room = max(UInt32(engine.roster.count), tally.up + tally.down)
        guard UInt64(tally.down) * 100 >= UInt64(percent) * UInt64(room) else { return nil }
        return TrackSkipped(trackID: track.id, title: track.title, reason: .crowd, down: tally.down, room: room)
    }

    /// Moves to the next track and tells everyone why (twice to the group, against loss).
    private mutating func skipTrack(_ notice: TrackSkipped, now: LocalTime, into out: inout [Effect]) {
        let tally = engine.votes.tally
        guard engine.next(now: DJTime(onTheDJ: now)) else { return }
        trackChanged(after: notice.reason == .crowd ? .crowdSkip : .djSkip, tally: tally, now: now, into: &out)
        for _ in 0..<2 { out.append(.send(.trackSkipped(notice), to: .group(group), station: stationID)) }
        out.append(.report(.trackSkipped(notice)))
        broadcast(now: now, change: .track, into: &out)
    }

    // MARK: Datagrams

    private mutating func handle(_ inbound: Inbound, now: LocalTime, into out: inout [Effect]) {
        let sender = inbound.sender
        let dj = DJTime(onTheDJ: now)
        recentPeers[inbound.from] = now
        switch inbound.message {
        case .hello(let hello):
            // The name is the guest's word, so it is cleaned and cut (escape sequences included).
            let name = GuestName.fromNetwork(hello.listenerName)?.value ?? sender.fingerprint
            let known = engine.roster.entries[sender]?.name
            let isNew = engine.hello(from: sender, name: name, now: dj)
            out.append(send(.stateSnapshot(engine.snapshot(now: dj)), to: inbound.from))
            if isNew {
                listenerJoined(name, now: now, into: &out)
            } else if known != name {
                broadcast(now: now, change: .listeners, into: &out)  // renamed
            }
        case .heartbeat:
            if engine.heartbeat(from: sender, now: dj) {
                listenerJoined(engine.roster.entries[sender]?.name ?? sender.fingerprint, now: now, into: &out)
            }
        case .leave:
            if engine.leave(from: sender) {
                out.append(.report(.listenersChanged(count: engine.roster.count, joined: nil, left: true)))
                broadcast(now: now, change: .listeners, into: &out)
            }
        case .query:
            // The list first: an observer lists a station once its snapshot is in, and a `stations`
            // that has seen it may stop right there.
            out.append(send(.roster(engine.roster.list(now: dj)), to: inbound.from))
            out.append(send(.stateSnapshot(engine.snapshot(now: dj)), to: inbound.from))
        case .vote(let vote):
            let before = engine.votes.tally
            let ack = engine.vote(from: sender, trackID: vote.trackID, choice: vote.choice, sequence: inbound.sequence)
            out.append(send(.voteAck(ack), to: inbound.from))
            if ack.status == .counted && ack.tally != before {
                out.append(
                    .report(
                        .voteCounted(
                            trackID: ack.trackID, choice: vote.choice, tally: ack.tally, voter: sender.fingerprint)))
                broadcast(now: now, change: .votes, into: &out)
            }
        case .chatSend(let send):
            let (ack, line) = chat.submit(send, from: sender, now: dj)
            out.append(self.send(.chatAck(ack), to: inbound.from))
            if let line {
                for _ in 0..<2 { out.append(.send(.chatLine(line), to: .group(group), station: stationID)) }
                out.append(.report(.chat(line)))
            }
        case .timePing(let ping):
            // t2 is when the datagram came off the socket; the runtime stamps t3 as it sends.
            out.append(
                send(
                    .timePong(
                        TimePong(
                            clientSendNs: ping.clientSendNs, serverReceiveNs: inbound.receivedAt.ns,
                            serverSendNs: now.ns)),
                    to: inbound.from))
        case .stateSnapshot, .voteAck, .goodbye, .timePong, .trackSkipped, .roster, .chatAck, .chatLine:
            break  // DJ kinds never pass the listener policy
        }
    }

    private func send(_ message: Message, to peer: PeerAddress) -> Effect {
        .send(message, to: .peer(peer), station: stationID)
    }

    private mutating func listenerJoined(_ name: String, now: LocalTime, into out: inout [Effect]) {
        out.append(.report(.listenersChanged(count: engine.roster.count, joined: name, left: false)))
        broadcast(now: now, change: .listeners, into: &out)
    }

    /// The state to the group, the DJ's own player, and the user.
    private mutating func broadcast(now: LocalTime, change: NodeEvent.StateChange, into out: inout [Effect]) {
        let dj = DJTime(onTheDJ: now)
        let snapshot = engine.snapshot(now: dj)
        out.append(.send(.stateSnapshot(snapshot), to: .group(group), station: stationID))
        lastSnapshotAt = now
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
        out.append(.send(.roster(roster), to: .group(group), station: stationID))
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
        case .discovered, .resolved, .unresolved, .removed, .allForNow:
            break
        }
    }

    private mutating func handle(_ answer: CatalogAnswer, now: LocalTime, into out: inout [Effect]) {
        switch answer {
        case .results(let term, let tracks):
            out.append(.report(.searchResults(term: term, tracks: tracks)))
        case .tracks(let tracks, let failure):
            if let failure { out.append(.report(.warning(failure))) }
            if engine.enqueue(tracks, now: DJTime(onTheDJ: now)) {
                out.append(.report(.queued(tracks: tracks, queueLength: engine.queue.count)))
                let first = engine.queue.count == tracks.count
                if first { trackChanged(after: .played, tally: Tally(), now: now, into: &out) }
                broadcast(now: now, change: first ? .track : .queue, into: &out)
            }
        }
    }

    /// One control command: `next`, `prev`, `pause`, `resume`, `toggle`, `seek S`, `search T`,
    /// `add ID…`, `quit`.
    private mutating func perform(_ line: String, now: LocalTime, into out: inout [Effect]) {
        let dj = DJTime(onTheDJ: now)
        let words = line.trimmingWhitespace().split(separator: " ", maxSplits: 1).map(String.init)
        guard let verb = words.first?.lowercased() else { return }
        switch verb {
        case "next", "n", "skip":
            guard let track = engine.nowPlaying else { return }
            let tally = engine.votes.tally
            skipTrack(
                TrackSkipped(
                    trackID: track.id, title: track.title, reason: .dj, down: tally.down,
                    room: max(UInt32(engine.roster.count), tally.up + tally.down)), now: now, into: &out)
        case "prev", "previous", "p", "back":
            let tally = engine.votes.tally
            if engine.previous(now: dj) {
                trackChanged(after: .djSkip, tally: tally, now: now, into: &out)
                broadcast(now: now, change: .track, into: &out)
            }
        case "pause":
            if engine.pause(now: dj) { broadcast(now: now, change: .paused, into: &out) }
        case "resume", "play":
            if engine.resume(now: dj) { broadcast(now: now, change: .resumed, into: &out) }
        case "toggle":
            perform(engine.isPaused ? "resume" : "pause", now: now, into: &out)
        case "shuffle":
            var random = SplitMix64(seed: UInt64(bitPattern: now.ns))
            if engine.shuffleUpcoming(using: &random) {
                out.append(.report(.notice("Shuffled the \(engine.queue.count - engine.index - 1) tracks to come.")))
                broadcast(now: now, change: .queue, into: &out)
            } else {
                out.append(.report(.warning("Nothing to shuffle: fewer than two tracks are still to come.")))
            }
        case "repeat":
            let mode =
                words.count == 2 ? StationEngine.RepeatMode(rawValue: words[1].lowercased()) : engine.repeatMode.next
            guard let mode else {
                return out.append(.report(.warning("'repeat' takes off, one or all (or nothing, to cycle).")))
            }
            engine.repeatMode = mode
            reportSettings(into: &out)
        case "volume", "vol":
            guard words.count == 2, let amount = Int(words[1].trimmingWhitespace()) else {
                return out.append(.report(.warning("'volume' takes 0 to 100, or +N / -N, e.g. 'volume 80'.")))
            }
            let relative = words[1].hasPrefix("+") || words[1].hasPrefix("-")
            volume = min(100, max(0, relative ? volume + amount : amount))
            out.append(.player(.volume(volume)))
            reportSettings(into: &out)
        case "seek":
            guard words.count == 2, let seconds = Double(words[1]), seconds.isFinite, seconds.magnitude < 1e9 else {
                return out.append(.report(.warning("'seek' takes a position in seconds, e.g. 'seek 42'.")))
            }
            if engine.seek(toNs: Nanos.seconds(seconds), now: dj) { broadcast(now: now, change: .seek, into: &out) }
        case "search":
            guard words.count == 2 else {
                return out.append(.report(.warning("'search' takes a term, e.g. 'search daft punk'.")))
            }
            out.append(.catalog(.search(words[1])))
        case "add":
            let ids =
                words.count == 2 ? words[1].split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) : []
            guard !ids.isEmpty else {
                return out.append(.report(.warning("'add' takes catalog track IDs, e.g. 'add 1440857781'.")))
            }
            out.append(.catalog(.lookup(ids)))
        case "mute", "unmute":
            guard words.count == 2 else {
                return out.append(
                    .report(.warning("'\(verb)' takes a guest's name or key fingerprint, e.g. '\(verb) Bob'.")))
            }
            // A guest is known by the name it gave (listening or chatting) or its key's fingerprint.
            let who = words[1]
            let known =
                engine.roster.entries.map { (name: $0.value.name, fingerprint: $0.key.fingerprint) }
                + chat.lines.map { (name: $0.name, fingerprint: $0.sender) }
            let matches = Set(
                known.filter { $0.name == who || $0.fingerprint.hasPrefix(who.lowercased()) }.map(\.fingerprint))
            guard matches.count == 1, let fingerprint = matches.first else {
                let problem = matches.isEmpty ? "No guest is called" : "Several guests match"
                return out.append(
                    .report(.warning("\(problem) '\(who)'; use the name or key fingerprint the list shows.")))
            }
            if verb == "mute" { chat.mute(fingerprint: fingerprint) } else { chat.unmute(fingerprint: fingerprint) }
            out.append(.report(.notice("\(verb == "mute" ? "Muted" : "Unmuted") '\(who)' in the chat.")))
        case "quit", "q", "exit":
            goOffAir(now: now, into: &out)
        default:
            out.append(
                .report(
                    .warning(
                        "Unknown command '\(verb)'; use next, prev, pause, resume, seek SECONDS, shuffle, "
                            + "repeat [off|one|all], volume N, search TERM, add ID, mute NAME, unmute NAME or quit.")))
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
                tally: tally)
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
