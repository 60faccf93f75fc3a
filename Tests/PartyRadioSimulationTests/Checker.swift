import Foundation
import PartyRadioCore

/// The invariants of a run, checked as it goes:
/// - votes: the DJ's tally is the checker's own count of the vote datagrams that reached it (each
///   key's newest vote on the track playing; retries, duplicates, replays and late ones change
///   nothing), and an acknowledged vote is in the DJ's book;
/// - tallies start from zero on every track change;
/// - crowd skip, the product's rule restated here (``crowdSkipRuleHolds``) from the checker's own
///   tally, the configured share and the listeners the DJ counts: the DJ never leaves a due crowd
///   skip pending, and every crowd skip it reports met the rule and came after 10 s of the track;
///   only votes from machines the checker saw listening (hellos and heartbeats reaching the DJ, no
///   gap over 3.5 s) for the DJ's `voteWeightAfterNs` weigh (``weighedTally(at:margin:)``);
/// - listeners that are synchronised and have the current anchor are on the station position,
///   and their player plays the station's track, paused exactly when the station is;
/// - chat: a line the DJ acknowledged as delivered is in its chat exactly once, each sender's
///   lines are in order, and no listener shows a line twice;
/// - requests: an acknowledged request is waiting in the DJ's book or has played (or was dropped),
///   no track waits twice, no guest has more waiting than the limit, and what plays next lists the
///   waiting requests in the order the checker works out itself (``playOrder``: approved first, then
///   up minus down votes, then the oldest), and request numbers only go up;
/// - stats: the plays the DJ records come in the order they started, none counts more voters than
///   were heard on it, and a play recorded as a crowd skip was one;
/// - bounded memory, and no listener that vanished silently is still counted.
struct Checker {
    let dj: SimNode
    let listenerCount: Int
    let toleranceNs: Int64
    /// The DJ's crowd-skip share as the run configured it (the simulated DJ is never told another).
    let crowdSkipPercent: Int
    /// How long a machine listens before its votes weigh, as the run configured it.
    let voteWeightAfterNs: Int64
    /// Each machine's stretch of listening as the checker sees it: since, last heard (DJ clock).
    private var listening: [String: (since: Int64, last: Int64)] = [:]
    /// Hellos and heartbeats seen (a second copy is a replay the DJ drops).
    private var beatsSeen: Set<VoteSeen> = []
    private(set) var acknowledged = 0
    private(set) var convergenceSamples = 0
    /// Checks that a listener beyond the router held the station's current anchor.
    private(set) var offLinkChecks = 0
    /// Of those, the ones at which its last snapshot was over a second old. Without the DJ's
    /// unicast copies it would hear the station only in answer to its hellos (when it calls the
    /// station silent, and every fifth beat), so half the time; with them, a snapshot comes every
    /// half second, and only loss makes one late. `SimulationTests` bounds the share over all seeds.
    private(set) var offLinkStale = 0
    /// A listener beyond the router hears of a change (track, pause, seek) within this long: the
    /// DJ's unicast copies of its snapshots carry it, as the group carries it on the link.
    static let offLinkLagNs: Int64 = 4_000_000_000
    private(set) var maxErrorNs: Int64 = 0
    private(set) var crowdSkips = 0
    /// Crowd skips whose down votes made exactly the configured share of the room: the rule's boundary.
    private(set) var crowdSkipsAtShare = 0
    private(set) var chatsDelivered = 0
    private(set) var requestsQueued = 0
    private(set) var requestVotesCounted = 0
    private let debug = ProcessInfo.processInfo.environment["PARTYRADIO_SIM_DEBUG"] != nil
    /// Bumped on every track change the DJ reports.
    private var play = 0
    /// Keys whose votes on the playing track reached the DJ during this play.
    private var votersThisPlay: Set<PublicKey> = []
    /// The last vote each key got through to the DJ: its choice, track and the play it arrived in.
    private var lastVote: [PublicKey: (choice: VoteChoice, trackID: String, play: Int)] = [:]
    /// When the last play the DJ recorded started.
    private var lastRecordedStart: DJTime?
    /// The votes on the playing track as the checker counts them: per key, the newest vote datagram
    /// (highest sequence number) that reached the DJ naming the track playing then. Emptied when the
    /// track changes.
    private var heardVotes: [PublicKey: (sequence: UInt64, choice: VoteChoice, machine: String)] = [:]
    /// Every vote datagram (sender and sequence number) that reached the DJ: a second copy is a
    /// replay, which changes nothing, whichever track is playing by then.
    private var votesSeen: Set<VoteSeen> = []
    private struct VoteSeen: Hashable {
        var key: PublicKey
        var sequence: UInt64
    }
    /// The vote datagrams handed to the DJ since its last turn (one turn takes a batch).
    private var batchVotes: [(key: PublicKey, sequence: UInt64, vote: Vote, machine: String)] = []
    /// The playing track's position after the DJ's last turn: (track, position, DJ clock).
    private var lastPosition: (trackID: String, positionNs: Int64, djNs: Int64)?
    /// The highest request number seen waiting, and the numbers waiting after the DJ's last turn.
    private var highestQueueID: UInt32 = 0
    private var lastWaiting: Set<UInt32> = []

    init(dj: SimNode, listenerCount: Int, toleranceNs: Int64, crowdSkipPercent: Int, voteWeightAfterNs: Int64) {
        self.voteWeightAfterNs = voteWeightAfterNs
        self.dj = dj
        self.listenerCount = listenerCount
        self.toleranceNs = toleranceNs
        self.crowdSkipPercent = crowdSkipPercent
    }

    /// The crowd-skip rule as the product states it (docs/PROTOCOL.md, "Skips"), restated rather than
    /// asked of the DJ: crowd skip on, the track playing (not paused) for at least 10 s, at least two
    /// down votes, and the down votes at least `percent` % of the room, the room being the listeners
    /// or the voters on the track if more voted.
    static func crowdSkipRuleHolds(
        percent: Int, tally: Tally, listeners: Int, playing: Bool, positionNs: Int64
    ) -> Bool {
        guard percent > 0, playing, positionNs >= 10_000_000_000, tally.down >= 2 else { return false }
        let room = max(listeners, Int(tally.up) + Int(tally.down))
        return Int(tally.down) * 100 >= percent * room
    }

    /// The order requests play in as the product states it (docs/PROTOCOL.md, "Queue list"),
    /// restated: approved first, then by up minus down votes (counted here from each request's votes),
    /// then the oldest first (request numbers go up in the order requests came).
    static func playOrder(_ waiting: [SongRequest]) -> [UInt32] {
        func score(_ request: SongRequest) -> Int {
            request.votes.values.reduce(0) { $0 + ($1 == .up ? 1 : $1 == .down ? -1 : 0) }
        }
        return waiting.map { (approved: $0.approved, score: score($0), queueID: $0.queueID) }
            .sorted {
                if $0.approved != $1.approved { return $0.approved }
                if $0.score != $1.score { return $0.score > $1.score }
                return $0.queueID < $1.queueID
            }
            .map(\.queueID)
    }

    /// The tally the checker counts from the vote datagrams it saw reach the DJ.
    private var heardTally: Tally {
        heardVotes.values.reduce(into: Tally()) { tally, vote in
            if vote.choice == .up { tally.up += 1 }
            if vote.choice == .down { tally.down += 1 }
        }
    }

    /// A hello or heartbeat from `key` on `machine` reached the DJ at `at`: the machine listens. One
    /// heard after a silence over 3.5 s starts its listening over.
    mutating func listenerHeard(on machine: String, key: PublicKey, sequence: UInt64, at: DJTime) {
        guard beatsSeen.insert(VoteSeen(key: key, sequence: sequence)).inserted else { return }
        if let stretch = listening[machine], at.ns - stretch.last <= 3_500_000_000 {
            listening[machine] = (stretch.since, max(stretch.last, at.ns))
        } else {
            listening[machine] = (at.ns, at.ns)
        }
    }

    /// The votes that weigh at `now`: those from machines listening for `voteWeightAfterNs` and
    /// heard within 3.5 s. `margin` widens (positive) or narrows (negative) both, so that the
    /// checker's instants, which are the datagrams' and not the DJ's turns', cannot decide a case
    /// that sits on the boundary.
    private func weighedTally(at now: Int64, margin: Int64) -> Tally {
        heardVotes.values.reduce(into: Tally()) { tally, vote in
            let weighs =
                voteWeightAfterNs == 0
                || listening[vote.machine].map { stretch in
                    now - stretch.last <= 3_500_000_000 + margin && now - stretch.since >= voteWeightAfterNs - margin
                } ?? false
            guard weighs else { return }
            if vote.choice == .up { tally.up += 1 }
            if vote.choice == .down { tally.down += 1 }
        }
    }

    /// The DJ's track after each of its turns, when it changed: (true time, track ID).
    private(set) var djTracks: [(time: Int64, trackID: String?)] = []

    /// Whether the station played `trackID` at some instant from `start` to `end` (true times).
    func stationPlayed(_ trackID: String, from start: Int64, to end: Int64) -> Bool {
        djTracks.indices.contains { index in
            let until = index + 1 < djTracks.count ? djTracks[index + 1].time : Int64.max
            return djTracks[index].trackID == trackID && djTracks[index].time <= end && until >= start
        }
    }

    var djMachine: DJMachine? {
        if case .dj(let machine) = dj.machine { machine } else { nil }
    }

    /// A vote datagram from `key` with `sequence` is about to reach the DJ.
    mutating func voteDelivered(_ vote: Vote, from key: PublicKey, sequence: UInt64, machine machineKey: String) {
        guard let machine = djMachine, votesSeen.insert(VoteSeen(key: key, sequence: sequence)).inserted else { return }
        if vote.trackID == machine.engine.nowPlaying?.id {
            votersThisPlay.insert(key)
            if sequence > heardVotes[key]?.sequence ?? 0 { heardVotes[key] = (sequence, vote.choice, machineKey) }
        }
        batchVotes.append((key, sequence, vote, machineKey))
        lastVote[key] = (vote.choice, vote.trackID, play)
    }

    mutating func djHandled(_ effects: [Effect], lan: SimLAN, log: inout Log) {
        guard let machine = djMachine else { return }
        if djTracks.last.map({ $0.trackID != machine.engine.nowPlaying?.id }) ?? true {
            djTracks.append((lan.now, machine.engine.nowPlaying?.id))
        }
        let djNow = DJTime(ns: dj.local(lan.now).ns)
        for case .report(.trackSkipped(let notice)) in effects where notice.reason == .crowd {
            crowdSkips += 1
            let percent = crowdSkipPercent
            if notice.down < 2 || percent == 0 || Int(notice.down) * 100 < percent * Int(notice.room)
                || notice.room < notice.down
            {
                log.fail("crowd skip of \(notice.trackID) with \(notice.down) down of \(notice.room)", at: lan.now)
            }
            if Int(notice.down) * 100 == percent * Int(notice.room) { crowdSkipsAtShare += 1 }
            // The down votes it counted weighed: no more than the checker's, the boundary given to the DJ.
            let weighed = weighedTally(at: djNow.ns, margin: 500_000_000)
            if notice.down > weighed.down {
                log.fail(
                    "crowd skip of \(notice.trackID) with \(notice.down) down, of which \(weighed.down) weigh",
                    at: lan.now)
            }
            // At most this far into the track when skipped: where it was after the DJ's last turn,
            // plus the time since.
            if let last = lastPosition, last.trackID == notice.trackID,
                last.positionNs + (djNow.ns - last.djNs) < 10_000_000_000
            {
                log.fail("crowd skip of \(notice.trackID) before it played 10 s", at: lan.now)
            }
        }
        // Records come before the track change that closed them, so the voters heard are this play's.
        let crowdSkipped = effects.contains {
            if case .report(.trackSkipped(let notice)) = $0 { notice.reason == .crowd } else { false }
        }
        for case .record(let record) in effects {
            if Int(record.up + record.down) > votersThisPlay.count {
                log.fail("the play of \(record.trackID) records more votes than voters heard", at: lan.now)
            }
            if let last = lastRecordedStart, record.startedAt < last {
                log.fail("the play of \(record.trackID) is recorded out of order", at: lan.now)
            }
            lastRecordedStart = record.startedAt
            if record.ending == .crowdSkip && !crowdSkipped {
                log.fail("the play of \(record.trackID) is recorded as a crowd skip that was not", at: lan.now)
            }
        }
        if crowdSkipped
            && !effects.contains(where: { if case .record(let r) = $0 { r.ending == .crowdSkip } else { false } })
        {
            log.fail("a crowd skip was not recorded as one", at: lan.now)
        }
        var trackChanged = false
        for case .report(.state(let snapshot, _, .track)) in effects {
            play += 1
            votersThisPlay = []
            heardVotes = [:]
            trackChanged = true
            if snapshot.tally != Tally() { log.fail("a new track started with votes \(snapshot.tally)", at: lan.now) }
        }
        // A track that follows itself (repeat one, `prev`) keeps its ID: a vote of this batch naming
        // it counts on the new play if the DJ took it after the change. The checker cannot see the
        // order inside a batch; the book's sequence number tells which datagram it applied last,
        // and that datagram's choice is what must be there.
        if trackChanged, let id = machine.engine.nowPlaying?.id {
            for sent in batchVotes where sent.vote.trackID == id {
                guard machine.engine.votes.voterRows[sent.key]?.sequence == sent.sequence else { continue }
                votersThisPlay.insert(sent.key)
                heardVotes[sent.key] = (sent.sequence, sent.vote.choice, sent.machine)
            }
        }
        batchVotes = []
        if machine.engine.votes.trackID != machine.engine.nowPlaying?.id {
            log.fail("the vote book is on another track than the one playing", at: lan.now)
        }
        let tally = machine.engine.votes.tally
        if tally != heardTally {
            log.fail("the DJ's tally \(tally) is not the \(heardTally) its voters sent", at: lan.now)
        }
        // The DJ checks the rule after every input: after its turn, a skip it owes is one it missed.
        if !machine.isFinished, let track = machine.engine.nowPlaying {
            let position = machine.engine.positionNs(at: djNow)
            // Due only when due whichever side of the boundary the DJ's instants fell.
            let weighed = weighedTally(at: djNow.ns, margin: -500_000_000)
            if Self.crowdSkipRuleHolds(
                percent: crowdSkipPercent, tally: weighed, listeners: machine.engine.roster.count,
                playing: !machine.engine.isPaused, positionNs: position)
                && weighed == weighedTally(at: djNow.ns, margin: 500_000_000)
            {
                log.fail(
                    "a crowd skip is due (\(weighed.down) down, \(weighed.up) up weighing, "
                        + "\(machine.engine.roster.count) listeners, \(crowdSkipPercent) %) and the DJ did not skip",
                    at: lan.now)
            }
            lastPosition = (track.id, position, djNow.ns)
        } else {
            lastPosition = nil
        }
        let waiting = machine.requests.waiting
        if Set(waiting.map(\.track.id)).count != waiting.count || Set(waiting.map(\.queueID)).count != waiting.count {
            log.fail("a track or request number waits twice: \(waiting.map(\.queueID))", at: lan.now)
        }
        // A request number is given once, above every one before (which makes it the request's age):
        // one not waiting after the DJ's last turn is above all seen so far.
        for number in waiting.map(\.queueID) where number <= highestQueueID && !lastWaiting.contains(number) {
            log.fail("request #\(number) waits again, or came under an old number", at: lan.now)
        }
        highestQueueID = max(highestQueueID, waiting.map(\.queueID).max() ?? 0)
        lastWaiting = Set(waiting.map(\.queueID))
        // The limit, counted here: no guest has more requests waiting than the DJ allows.
        var perGuest: [PublicKey: Int] = [:]
        for request in waiting { perGuest[request.requester, default: 0] += 1 }
        if let over = perGuest.first(where: { $0.value > machine.requests.maxPerGuest }) {
            log.fail("\(over.key.fingerprint) has \(over.value) requests waiting, over the limit", at: lan.now)
        }
        let listed = machine.upNext.entries.filter(\.isRequest).map(\.queueID)
        if listed != Array(Self.playOrder(waiting).prefix(listed.count)) || listed.isEmpty != waiting.isEmpty {
            log.fail("what plays next \(listed) is not in the order \(Self.playOrder(waiting))", at: lan.now)
        }
        if machine.engine.roster.count > listenerCount {
            log.fail("\(machine.engine.roster.count) listeners counted, only \(listenerCount) exist", at: lan.now)
        }
    }

    mutating func voterFinished(_ voter: GuestExchange<GuestVote>, node: SimNode, lan: SimLAN, log: inout Log) {
        guard let result = voter.result else {
            // Without an answer only a dead or absent DJ, or nothing to vote on, is an excuse.
            if dj.alive && !(djMachine?.isFinished ?? true) && dj.finishedAt == nil, let error = voter.exitError,
                error.code != .refused
            {
                log.fail("\(node.name) got no acknowledgement from a live DJ: \(error)", at: lan.now)
            }
            return
        }
        guard result.answer.ack.status == .counted else { return }
        acknowledged += 1
        guard let machine = djMachine, dj.alive else { return }
        let key = node.signer.publicKey
        // The ack answers the last vote this key got through, if that one was in the current play.
        guard let last = lastVote[key], last.play == play, last.trackID == machine.engine.nowPlaying?.id,
            last.choice == result.answer.ack.choice
        else { return }
        if machine.engine.votes.choice(of: key) != result.answer.ack.choice {
            log.fail(
                "\(node.name)'s acknowledged \(result.answer.ack.choice.name) is not in the DJ's book "
                    + "(\(machine.engine.votes.choice(of: key).name))", at: lan.now)
        }
    }

    mutating func chatterFinished(_ chatter: GuestExchange<GuestChat>, node: SimNode, lan: SimLAN, log: inout Log) {
        guard let result = chatter.result, let machine = djMachine,
            result.answer.status == .delivered || result.answer.status == .duplicate
        else {
            if dj.alive && dj.finishedAt == nil && chatter.result == nil, let error = chatter.exitError {
                log.fail("\(node.name) got no chat acknowledgement from a live DJ: \(error)", at: lan.now)
            }
            return
        }
        chatsDelivered += 1
        let sender = node.signer.publicKey.fingerprint
        let copies = machine.chat.lines.filter { $0.sender == sender && $0.messageID == chatter.request.send.messageID }
        if copies.count != 1 {
            log.fail("\(node.name)'s acknowledged line is in the DJ's chat \(copies.count) times", at: lan.now)
        }
    }

    mutating func requesterFinished(
        _ requester: GuestExchange<GuestTrackRequest>, node: SimNode, lan: SimLAN, log: inout Log
    ) {
        guard let result = requester.result else {
            if dj.alive && dj.finishedAt == nil, let error = requester.exitError {
                log.fail("\(node.name) got no answer to its request from a live DJ: \(error)", at: lan.now)
            }
            return
        }
        guard result.answer.ack.status.isQueued, let machine = djMachine, dj.alive else { return }
        requestsQueued += 1
        let number = result.answer.ack.queueID
        if !machine.requests.waiting.contains(where: { $0.queueID == number })
            && machine.requests.outcome(of: number) == nil
        {
            log.fail("\(node.name)'s acknowledged request #\(number) is neither waiting nor played", at: lan.now)
        }
    }

    mutating func requestVoterFinished(
        _ voter: GuestExchange<GuestRequestVote>, node: SimNode, lan: SimLAN, log: inout Log
    ) {
        guard let result = voter.result else {
            if dj.alive && dj.finishedAt == nil, let error = voter.exitError {
                log.fail("\(node.name) got no answer to its request vote from a live DJ: \(error)", at: lan.now)
            }
            return
        }
        guard let machine = djMachine, dj.alive else { return }
        let number = voter.request.vote.queueID
        switch result.answer.status {
        case .counted:
            requestVotesCounted += 1
            // Still waiting (it may have started playing since): the DJ's book holds the vote.
            if let request = machine.requests.waiting.first(where: { $0.queueID == number }),
                (request.votes[node.signer.publicKey] ?? .clear) != result.answer.choice
            {
                log.fail("\(node.name)'s acknowledged vote on request #\(number) is not in the book", at: lan.now)
            }
        case .played, .dropped:
            if machine.requests.outcome(of: number) == nil {
                log.fail(
                    "request #\(number) answered \(result.answer.status) but the DJ never finished it", at: lan.now)
            }
        case .unknown, .addressLimit:
            // A number not given out yet (it may be by the time the answer lands); every simulated
            // host has an address of its own.
            break
        }
    }

    mutating func checkConvergence(lan: SimLAN, log: inout Log) {
        guard dj.alive, let machine = djMachine, !machine.isFinished else { return }
        let djNow = DJTime(ns: dj.local(lan.now).ns)
        for node in lan.nodes where node.alive && node.finishedAt == nil && node.offLink {
            guard case .listener(let listener) = node.machine, let tuned = listener.tuned,
                let syncedAt = node.synchronizedAt, lan.now - syncedAt >= Self.offLinkLagNs,
                djNow.ns - machine.engine.anchor.djTime.ns >= Self.offLinkLagNs
            else { continue }
            offLinkChecks += 1
            if node.local(lan.now) - tuned.lastHeard > 1_000_000_000 { offLinkStale += 1 }
            if tuned.snapshot.anchor != machine.engine.anchor {
                log.fail(
                    "\(node.name), beyond the router, still holds an anchor the DJ left over "
                        + "\(Double(djNow.ns - machine.engine.anchor.djTime.ns) / 1e9) s ago", at: lan.now)
            }
        }
        for node in lan.nodes where node.alive && node.finishedAt == nil {
            guard case .listener(let listener) = node.machine, let tuned = listener.tuned, !tuned.silent,
                let syncedAt = node.synchronizedAt, lan.now - syncedAt >= SimRun.settleNs,
                tuned.snapshot.anchor == machine.engine.anchor,
                tuned.snapshot.nowPlaying?.id == machine.engine.nowPlaying?.id, let view = listener.view,
                let heard = view.stationPosition(at: node.local(lan.now))
            else { continue }
            let truth = machine.engine.positionNs(at: djNow)
            let error = heard - truth
            convergenceSamples += 1
            maxErrorNs = max(maxErrorNs, error.magnitude > Int64.max.magnitude ? .max : Int64(error.magnitude))
            if debug, let estimate = listener.clock.estimate {
                let trueDrift = (1 + dj.driftPPM / 1e6) / (1 + node.driftPPM / 1e6) * 1e6 - 1e6
                print(
                    "t=\(Double(lan.now - SimRun.start) / 1e9) \(node.name) err \(Double(error) / 1e6) ms drift est "
                        + "\(estimate.driftPPM) true \(trueDrift) samples \(listener.clock.samples.count) acc "
                        + "\(listener.clock.acceptedCount) rej \(listener.clock.rejectedCount) resets \(listener.clock.resetCount) "
                        + "used \(estimate.samplesUsed) ref \(Double(estimate.referenceLocalNs - node.local(lan.now).ns) / 1e9)"
                )
            }
            if error.magnitude > toleranceNs.magnitude {
                log.fail("\(node.name) is \(Double(error) / 1e6) ms off the station position", at: lan.now)
            }
            if node.playerTrack != machine.engine.nowPlaying?.id || node.playerPaused != machine.engine.isPaused {
                log.fail(
                    "\(node.name)'s player has \(node.playerTrack ?? "nothing") paused=\(node.playerPaused); the station "
                        + "plays \(machine.engine.nowPlaying?.id ?? "nothing") paused=\(machine.engine.isPaused)",
                    at: lan.now)
            }
        }
    }

    mutating func checkEnd(lan: SimLAN, log: inout Log) {
        for node in lan.nodes {
            let shown = node.reports.compactMap { report -> String? in
                if case .chat(let line) = report.event { "\(line.sender)/\(line.messageID)" } else { nil }
            }
            if Set(shown).count != shown.count { log.fail("\(node.name) showed a chat line twice", at: lan.now) }
        }
        if let machine = djMachine {
            var last: [String: UInt64] = [:]
            for line in machine.chat.lines {
                if let previous = last[line.sender], previous >= line.messageID {
                    log.fail("chat lines from \(line.sender) out of order", at: lan.now)
                }
                last[line.sender] = line.messageID
            }
        }
        for node in lan.nodes {
            if case .listener(let listener) = node.machine, listener.clock.samples.count > 256 {
                log.fail("\(node.name) keeps \(listener.clock.samples.count) time samples", at: lan.now)
            }
        }
        guard dj.alive, let machine = djMachine, !machine.isFinished else { return }
        // The listener list names real guests: each entry is a listener's name or, for one the DJ
        // only heard heartbeats from, its key's fingerprint; and the list counts what the DJ counts.
        let guests = Set(lan.nodes.map { "guest\($0.index - 1)" } + lan.nodes.map(\.signer.publicKey.fingerprint))
        let list = machine.engine.roster.list(now: DJTime(ns: dj.local(lan.now).ns))
        if list.total != UInt32(machine.engine.roster.count)
            || list.entries.contains(where: { !guests.contains($0.name) })
        {
            log.fail("the listener list \(list.entries.map(\.name)) does not match the guests", at: lan.now)
        }
        // Listeners that crashed or quit long enough ago are no longer counted.
        let timeout = machine.engine.roster.timeoutNs + 1_000_000_000
        for node in lan.nodes {
            guard case .listener = node.machine else { continue }
            let goneAt = node.crashedAt ?? node.finishedAt
            if let goneAt, lan.now - goneAt > timeout, machine.engine.roster.entries[node.signer.publicKey] != nil {
                log.fail(
                    "\(node.name) left at t=\(Double(goneAt - SimRun.start) / 1e9) s and is still counted", at: lan.now)
            }
        }
    }
}
