/// One guest's request waiting to play.
public struct SongRequest: Hashable, Sendable, Codable {
    /// The DJ's ID for it (`vote --request ID`); increasing, never reused by a station.
    public var queueID: UInt32
    public var track: Track
    public var requester: PublicKey
    /// The address the request came from (one guest, one vote: limits count addresses too).
    public var requesterAddress: String
    /// The name the guest gave (cleaned).
    public var requesterName: String
    /// The votes on it, one per key; the requester's own is not implied.
    public var votes: [PublicKey: VoteChoice]
    /// The keys whose votes count, by the address they voted from.
    public var voters: [String: Set<PublicKey>] = [:]
    /// Per voter, the sequence number of its last vote datagram applied (a clear included): an
    /// older one, replayed after a restart emptied the replay windows, changes nothing. Saved with
    /// the request (nil in a book an older DJ saved: none known).
    public var sequences: [PublicKey: UInt64]?
    /// False while it waits for the DJ's approval (`--requests approve`).
    public var approved: Bool

    public var tally: Tally {
        votes.values.reduce(into: Tally()) { tally, choice in
            switch choice {
            case .up: tally.up += 1
            case .down: tally.down += 1
            case .clear: break
            }
        }
    }

    /// Up minus down: the order requests play in (ties: the older first).
    public var score: Int { Int(tally.up) - Int(tally.down) }
}

/// The guests' requests: who asked for what, the votes on each, the order they play in, the
/// per-guest limit and the DJ's mode. Pure state; the DJ's machine drives it.
///
/// Exactly once per sender: a sender's request IDs only go up; a retry of the last one gets the
/// same answer again, an older one is refused as stale. Everything kept per sender is bounded.
public struct RequestBook: Sendable, Equatable, Codable {
    /// Requests waiting at most (for the whole station): a flood of fresh keys cannot grow it
    /// without end.
    public static let maxWaiting = 500
    /// Senders remembered at most; the least recently heard is forgotten first.
    public static let maxSenders = 4096
    /// Played and dropped requests remembered, so a late vote gets a clear answer.
    public static let maxFinished = 1000

    public enum Finished: String, Sendable, Codable {
        case played, dropped
    }

    public var mode: RequestMode
    /// Waiting requests per guest at most.
    public var maxPerGuest: Int
    /// Guests (keys) counted per address, for votes; an address may have `maxPerGuest` times
    /// this many requests waiting.
    public var votersPerAddress: Int
    /// In the order they arrived; ``ordered`` is the order they play in.
    public private(set) var waiting: [SongRequest] = []
    public private(set) var nextQueueID: UInt32 = 1
    private var finished: [UInt32: Finished] = [:]
    private var senders: [PublicKey: SenderState] = [:]

    private struct SenderState: Sendable, Equatable, Codable {
        var lastID: UInt64
        /// The answer to `lastID`, sent again to a retry; nil while the DJ still resolves it.
        var answer: RequestAck?
        var lastHeardNs: Int64
    }

    public init(mode: RequestMode = .open, maxPerGuest: Int = 3, votersPerAddress: Int = 1) {
        self.mode = mode
        self.maxPerGuest = max(1, maxPerGuest)
        self.votersPerAddress = max(1, votersPerAddress)
    }

    /// The order requests play in: approved before waiting for approval, then by score, then age.
    public var ordered: [SongRequest] {
        waiting.sorted { ($0.approved ? 0 : 1, -$0.score, $0.queueID) < ($1.approved ? 0 : 1, -$1.score, $1.queueID) }
    }

    /// The request that plays next, if any.
    public var next: SongRequest? { ordered.first { $0.approved } }

    /// 1-based place of a waiting request in ``ordered`` (0 when not waiting).
    public func position(of queueID: UInt32) -> UInt16 {
        guard let index = ordered.firstIndex(where: { $0.queueID == queueID }) else { return 0 }
        return UInt16(clamping: index + 1)
    }

    public func count(from guest: PublicKey) -> Int { waiting.count { $0.requester == guest } }

    public func count(fromAddress address: String) -> Int { waiting.count { $0.requesterAddress == address } }

    /// Why `guest` at `address` may not add a request now, if they may not.
    private func limit(for guest: PublicKey, at address: String) -> RequestAck.Status? {
        if count(from: guest) >= maxPerGuest || waiting.count >= Self.maxWaiting { return .overLimit }
        if count(fromAddress: address) >= maxPerGuest * votersPerAddress { return .addressLimit }
        return nil
    }

    /// What a request datagram starts: a fresh request the DJ must now resolve, a retry
    /// (answered with the earlier answer, or nothing while it is still being resolved), or an
    /// answer at once (stale, mode off, over the limit).
    public enum Admission: Equatable, Sendable {
        case resolve
        case inProgress
        case answer(RequestAck)
    }

    /// A request datagram from `guest` at DJ time `nowNs`: checks, before any lookup, everything
    /// that needs no track.
    public mutating func admit(
        _ send: RequestSend, from guest: PublicKey, address: String = "", nowNs: Int64
    ) -> Admission {
        if var sender = senders[guest] {
            if send.requestID == sender.lastID {
                sender.lastHeardNs = nowNs
                senders[guest] = sender
                return sender.answer.map { .answer($0) } ?? .inProgress
            }
            if send.requestID < sender.lastID { return .answer(RequestAck(requestID: send.requestID, status: .stale)) }
        }
        let refusal: RequestAck.Status? =
            switch send.wanted {
            case .catalogID(let id) where id.isEmpty || id.utf8.count > StateSnapshot.Limit.trackID: .rejected
            case .library(let words) where words.trimmingWhitespace().isEmpty: .rejected
            default:
                mode == .off ? .requestsOff : limit(for: guest, at: address)
            }
        if let refusal {
            let ack = RequestAck(requestID: send.requestID, status: refusal, limit: UInt16(clamping: maxPerGuest))
            remember(guest, SenderState(lastID: send.requestID, answer: ack, lastHeardNs: nowNs))
            return .answer(ack)
        }
        remember(guest, SenderState(lastID: send.requestID, answer: nil, lastHeardNs: nowNs))
        return .resolve
    }

    /// The track for `guest`'s request `requestID` was found (or not: `track` nil, `unavailable`
    /// when the lookup failed rather than found nothing). Queues it and returns the answer; nil
    /// when the guest has sent a newer request meanwhile (the answer would go nowhere).
    public mutating func resolved(
        requestID: UInt64, from guest: PublicKey, address: String = "", name: String, track: Track?,
        unavailable: Bool = false
    ) -> RequestAck? {
        guard var sender = senders[guest], sender.lastID == requestID, sender.answer == nil else { return nil }
        let ack: RequestAck
        if let track {
            ack = queue(track, requestID: requestID, from: guest, address: address, name: name)
        } else {
            ack = RequestAck(requestID: requestID, status: unavailable ? .unavailable : .unknownTrack)
        }
        // A lookup that failed may be tried again with the same ID: it is not remembered as answered.
        sender.answer = ack.status == .unavailable ? nil : ack
        if ack.status == .unavailable { sender.lastID = requestID &- 1 }
        senders[guest] = sender
        return ack
    }

    private mutating func queue(
        _ track: Track, requestID: UInt64, from guest: PublicKey, address: String, name: String
    ) -> RequestAck {
        // Checked again: the mode or the guest's count may have changed while the track was looked up.
        if mode == .off { return RequestAck(requestID: requestID, status: .requestsOff) }
        if let index = waiting.firstIndex(where: { $0.track.id == track.id }) {
            let queueID = waiting[index].queueID
            _ = vote(RequestVote(queueID: queueID, choice: .up), from: guest, address: address, sequence: nil)
            return RequestAck(
                requestID: requestID, status: .alreadyQueued, queueID: queueID, position: position(of: queueID),
                title: track.title, artist: track.artist)
        }
        if let limit = limit(for: guest, at: address) {
            return RequestAck(requestID: requestID, status: limit, limit: UInt16(clamping: maxPerGuest))
        }
        let request = SongRequest(
            queueID: nextQueueID, track: track, requester: guest, requesterAddress: address, requesterName: name,
            votes: [:], approved: mode == .open)
        nextQueueID &+= 1
        waiting.append(request)
        return RequestAck(
            requestID: requestID, status: request.approved ? .queued : .awaitingApproval, queueID: request.queueID,
            position: position(of: request.queueID), title: track.title, artist: track.artist)
    }

    /// A guest's vote on a waiting request. `sequence` is its datagram's (nil: the DJ's own, for a
    /// guest who requested a track already waiting). A datagram whose sequence is not above the
    /// voter's last one applied on this request is old (a replay after a restart, or overtaken by
    /// a newer vote): it changes nothing and is answered with the vote as it stands (the wire's
    /// statuses have no "superseded" for requests; docs/SECURITY.md, "Replayed datagrams").
    public mutating func vote(
        _ vote: RequestVote, from guest: PublicKey, address: String = "", sequence: UInt64?
    ) -> RequestVoteAck {
        guard let index = waiting.firstIndex(where: { $0.queueID == vote.queueID }) else {
            let status: RequestVoteAck.Status =
                switch finished[vote.queueID] {
                case .played: .played
                case .dropped: .dropped
                case nil: .unknown
                }
            return RequestVoteAck(voteSequence: sequence ?? 0, queueID: vote.queueID, status: status)
        }
        if let sequence, let last = waiting[index].sequences?[guest], sequence <= last {
            let request = waiting[index]
            return RequestVoteAck(
                voteSequence: sequence, queueID: vote.queueID, status: .counted, choice: request.votes[guest] ?? .clear,
                tally: request.tally, position: position(of: vote.queueID))
        }
        // Whether a replay of this datagram could change anything later: a vote, or a clear of one.
        let worthKeeping = vote.choice != .clear || waiting[index].votes[guest] != nil
        if vote.choice == .clear {
            waiting[index].votes[guest] = nil
            for host in waiting[index].voters.keys { waiting[index].voters[host]?.remove(guest) }
            waiting[index].voters = waiting[index].voters.filter { !$0.value.isEmpty }
        } else {
            var here = waiting[index].voters[address] ?? []
            if waiting[index].votes[guest] == nil && !here.contains(guest) && here.count >= votersPerAddress {
                return RequestVoteAck(voteSequence: sequence ?? 0, queueID: vote.queueID, status: .addressLimit)
            }
            here.insert(guest)
            waiting[index].voters[address] = here
            waiting[index].votes[guest] = vote.choice
        }
        if let sequence, worthKeeping || waiting[index].sequences?[guest] != nil {
            keep(sequence, of: guest, at: index)
        }
        let request = waiting[index]
        return RequestVoteAck(
            voteSequence: sequence ?? 0, queueID: vote.queueID, status: .counted,
            choice: request.votes[guest] ?? .clear,
            tally: request.tally, position: position(of: vote.queueID))
    }

    /// Sequences kept per request at most. Fresh keys that vote and clear in turn (a machine's one
    /// vote freed each time) would grow the table without end: past this, a key without a vote
    /// now makes room (its old vote, replayed after a restart, could count again).
    public static let maxSequencesPerRequest = 4096

    private mutating func keep(_ sequence: UInt64, of guest: PublicKey, at index: Int) {
        var sequences = waiting[index].sequences ?? [:]
        if sequences[guest] == nil, sequences.count >= Self.maxSequencesPerRequest {
            let votes = waiting[index].votes
            if let spare = sequences.keys.first(where: { votes[$0] == nil }) ?? sequences.keys.first {
                sequences[spare] = nil
            }
        }
        sequences[guest] = sequence
        waiting[index].sequences = sequences
    }

    /// The request starts playing: it leaves the queue.
    @discardableResult
    public mutating func played(_ queueID: UInt32) -> SongRequest? { finish(queueID, as: .played) }

    /// The DJ drops a request.
    @discardableResult
    public mutating func drop(_ queueID: UInt32) -> SongRequest? { finish(queueID, as: .dropped) }

    /// The DJ approves a request: it may play now.
    public mutating func approve(_ queueID: UInt32) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.queueID == queueID }), !waiting[index].approved else {
            return false
        }
        waiting[index].approved = true
        return true
    }

    /// The DJ mutes a guest: their waiting requests go.
    public mutating func dropAll(fingerprint: String) -> [SongRequest] {
        let theirs = waiting.filter { $0.requester.fingerprint == fingerprint }
        for request in theirs { finish(request.queueID, as: .dropped) }
        return theirs
    }

    /// Drops every waiting request from the machine `address` names (``MachineID/key``; a muted
    /// machine's other keys), and returns them.
    public mutating func dropAll(fromAddress address: String) -> [SongRequest] {
        let theirs = waiting.filter { $0.requesterAddress == address }
        for request in theirs { finish(request.queueID, as: .dropped) }
        return theirs
    }

    @discardableResult
    private mutating func finish(_ queueID: UInt32, as outcome: Finished) -> SongRequest? {
        guard let index = waiting.firstIndex(where: { $0.queueID == queueID }) else { return nil }
        let request = waiting.remove(at: index)
        if finished.count >= Self.maxFinished, let oldest = finished.keys.min() { finished.removeValue(forKey: oldest) }
        finished[queueID] = outcome
        return request
    }

    /// Passes every waiting request's track through `transform` (a DJ that starts again serves its
    /// files at new URLs); a request whose track is gone (nil) is dropped and returned.
    @discardableResult
    public mutating func mapTracks(_ transform: (Track) -> Track?) -> [SongRequest] {
        var gone: [SongRequest] = []
        for request in waiting {
            if let track = transform(request.track) {
                if let index = waiting.firstIndex(where: { $0.queueID == request.queueID }) {
                    waiting[index].track = track
                }
            } else if let dropped = drop(request.queueID) {
                gone.append(dropped)
            }
        }
        return gone
    }

    /// A request ID the DJ knows as finished, for a clear answer.
    public func outcome(of queueID: UInt32) -> Finished? { finished[queueID] }

    private mutating func remember(_ guest: PublicKey, _ state: SenderState) {
        if senders[guest] == nil, senders.count >= Self.maxSenders,
            let oldest = senders.min(by: { $0.value.lastHeardNs < $1.value.lastHeardNs })
        {
            senders.removeValue(forKey: oldest.key)
        }
        senders[guest] = state
    }

    /// The list the wire carries: requests in play order, then `upcoming` tracks of the DJ's queue.
    public func list(upcoming: [Track]) -> QueueList {
        let requests = ordered.map { request in
            QueueList.Entry(
                queueID: request.queueID, trackID: request.track.id, title: request.track.title,
                artist: request.track.artist, requester: request.requesterName, tally: request.tally,
                awaitingApproval: !request.approved)
        }
        let own = upcoming.map { track in
            QueueList.Entry(
                queueID: 0, trackID: track.id, title: track.title, artist: track.artist, requester: "", tally: Tally(),
                awaitingApproval: false)
        }
        return QueueList(mode: mode, total: UInt32(waiting.count), entries: requests + own)
    }
}
