/// The DJ's station as pure state: queue, playback anchor, votes and listeners.
///
/// Every operation takes the DJ-clock time `now` as a parameter, so the node
/// drives it from a real clock and tests drive it by hand. Operations that change what
/// listeners see return true, so the node knows to send a snapshot at once.
public struct StationEngine: Sendable {
    public private(set) var name: String
    public private(set) var queue: [Track]
    public private(set) var index: Int
    public private(set) var anchor: PlaybackAnchor
    public private(set) var votes: VoteBook
    public private(set) var roster: ListenerRoster
    /// A guest's request playing between two tracks of the queue; ``index`` stays on the track
    /// before it, so the queue carries on after it.
    public private(set) var interlude: Interlude?

    /// A request on the air: its track, and who asked.
    public struct Interlude: Hashable, Sendable, Codable {
        public var queueID: UInt32
        public var track: Track
        public var requesterName: String

        public init(queueID: UInt32, track: Track, requesterName: String) {
            self.queueID = queueID
            self.track = track
            self.requesterName = requesterName
        }

        public init(_ request: SongRequest) {
            self.init(queueID: request.queueID, track: request.track, requesterName: request.requesterName)
        }
    }

    public init(
        name: String, queue: [Track], now: DJTime, startIndex: Int = 0, startPositionNs: Int64 = 0,
        paused: Bool = false, interlude: Interlude? = nil
    ) {
        self.name = name
        self.queue = queue
        self.interlude = interlude
        index = queue.isEmpty ? 0 : min(max(0, startIndex), queue.count - 1)
        anchor = paused ? .paused(at: startPositionNs, djTime: now) : .playing(at: startPositionNs, djTime: now)
        votes = VoteBook(trackID: interlude?.track.id ?? (queue.isEmpty ? nil : queue[index].id))
        roster = ListenerRoster()
    }

    public var nowPlaying: Track? { interlude?.track ?? (queue.isEmpty ? nil : queue[index]) }
    public var isPaused: Bool { anchor.isPaused }

    public func positionNs(at now: DJTime) -> Int64 {
        anchor.position(at: now, durationNs: nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond })
    }

    public mutating func rename(_ newName: String) { name = newName }

    // MARK: Transport controls

    /// Skips to the next track, keeping play or pause: `request` if one is waiting, else the
    /// queue's next (wrapping to the first after the last).
    public mutating func next(now: DJTime, request: Interlude? = nil) -> Bool {
        if let request { return play(request, now: now) }
        if interlude != nil {
            interlude = nil
            return move(to: index + 1, now: now) || restart(now: now)
        }
        return move(to: index + 1, now: now)
    }

    /// Goes back one track (from a request, to the track before it; from the first, restarts
    /// it), keeping play or pause.
    public mutating func previous(now: DJTime) -> Bool {
        if interlude != nil {
            interlude = nil
            return move(to: index, now: now)
        }
        return move(to: max(0, index - 1), now: now)
    }

    /// Plays a guest's request now (the queue carries on after it).
    private mutating func play(_ request: Interlude, now: DJTime) -> Bool {
        interlude = request
        return restart(now: now)
    }

    /// The track now playing from its start; its votes are forgotten.
    private mutating func restart(now: DJTime) -> Bool {
        guard let track = nowPlaying else { return false }
        anchor = PlaybackAnchor(djTime: now, positionNs: 0, rateMicros: anchor.rateMicros)
        votes.reset(trackID: track.id)
        return true
    }

    public mutating func pause(now: DJTime) -> Bool {
        guard !anchor.isPaused, nowPlaying != nil else { return false }
        anchor = .paused(at: positionNs(at: now), djTime: now)
        return true
    }

    public mutating func resume(now: DJTime) -> Bool {
        guard anchor.isPaused, nowPlaying != nil else { return false }
        anchor = .playing(at: positionNs(at: now), djTime: now)
        return true
    }

    /// Moves to an absolute position in the current track.
    public mutating func seek(toNs position: Int64, now: DJTime) -> Bool {
        guard let track = nowPlaying else { return false }
        let clamped = min(max(0, position), Int64(track.durationMs) * Nanos.perMillisecond)
        anchor = PlaybackAnchor(djTime: now, positionNs: clamped, rateMicros: anchor.rateMicros)
        return true
    }

    /// Adds tracks at the end of the queue.
    public mutating func enqueue(_ tracks: [Track], now: DJTime) -> Bool {
        guard !tracks.isEmpty else { return false }
        let wasEmpty = queue.isEmpty && interlude == nil
        queue.append(contentsOf: tracks)
        if wasEmpty { _ = move(to: 0, now: now) }
        return true
    }

    /// What happens when a track ends: the next one (wrapping after the last: `all`), the same
    /// one again (`one`), or the next one but a stop after the last (`off`).
    public enum RepeatMode: String, Sendable, CaseIterable, Codable {
        case off, one, all

        /// The mode after this one, for a key that cycles through them.
        public var next: RepeatMode {
            switch self {
            case .all: .one
            case .one: .off
            case .off: .all
            }
        }
    }

    public var repeatMode: RepeatMode = .all

    /// Advances past a finished track. Call regularly; returns true when the track changed (or,
    /// with repeat `one`, started again): to `request` if one is waiting, else the queue's next;
    /// at the end of the queue with repeat `off` the station pauses at the end of the last track
    /// instead.
    public mutating func tick(now: DJTime, request: Interlude? = nil) -> Bool {
        guard let track = nowPlaying, !anchor.isPaused else { return false }
        let durationNs = Int64(track.durationMs) * Nanos.perMillisecond
        guard durationNs > 0, let end = anchor.djTime(whenPositionReaches: durationNs), now >= end else {
            return false
        }
        // Start the next track at the instant this one ended, so no time is lost between ticks.
        let changed: Bool
        if repeatMode == .one {
            changed = restart(now: end)
        } else if let request {
            changed = play(request, now: end)
        } else if repeatMode == .off && index == queue.count - 1 {
            anchor = .paused(at: durationNs, djTime: end)
            return true
        } else {
            changed = next(now: end)
        }
        anchor = .playing(at: anchor.position(at: now), djTime: now)
        return changed
    }

    /// A live station's now playing becomes `track`, what the player it follows plays (docs/LIVE.md,
    /// "Now playing from the player"): the queue is that track alone, at `positionNs`, playing or
    /// paused, its votes forgotten when it is another track.
    public mutating func follow(_ track: Track, positionNs: Int64, paused: Bool, now: DJTime) {
        let changed = nowPlaying?.id != track.id
        queue = [track]
        index = 0
        interlude = nil
        let position = track.durationMs > 0 ? min(positionNs, Int64(track.durationMs) * Nanos.perMillisecond) : 0
        anchor =
            paused
            ? .paused(at: max(0, position), djTime: now)
            : PlaybackAnchor(djTime: now, positionNs: max(0, position), rateMicros: anchor.rateMicros)
        if changed { votes.reset(trackID: track.id) }
    }

    /// Shuffles the tracks after the one playing (it keeps playing); `random` makes it repeatable.
    public mutating func shuffleUpcoming(using random: inout some RandomNumberGenerator) -> Bool {
        guard index + 2 < queue.count else { return false }
        queue[(index + 1)...].shuffle(using: &random)
        return true
    }

    private mutating func move(to newIndex: Int, now: DJTime) -> Bool {
        guard !queue.isEmpty else { return false }
        interlude = nil
        index = newIndex >= queue.count ? 0 : newIndex
        return restart(now: now)
    }

    /// The tracks of the queue that play next (after the one playing, or after the request
    /// playing), at most `limit`, wrapping like the queue does.
    public func upcoming(limit: Int) -> [Track] {
        guard !queue.isEmpty, limit > 0 else { return [] }
        let start = index + 1
        let count = repeatMode == .off ? max(0, queue.count - start) : queue.count - (interlude == nil ? 1 : 0)
        return (0..<min(limit, count)).map { queue[(start + $0) % queue.count] }
    }

    /// Puts back the votes saved with the station (a restart).
    public mutating func restoreVotes(_ saved: VoteBook) {
        guard saved.trackID == nowPlaying?.id else { return }
        votes = saved
    }

    // MARK: Listeners and votes

    /// `machine`: the listener's ``MachineID/key``, nil while not known (``ListenerRoster/Entry/machine``).
    public mutating func hello(from key: PublicKey, name: String, machine: String? = nil, now: DJTime) -> Bool {
        roster.join(key, name: name, machine: machine, now: now)
    }

    public mutating func heartbeat(from key: PublicKey, machine: String? = nil, now: DJTime) -> Bool {
        roster.heartbeat(key, machine: machine, now: now)
    }

    public mutating func leave(from key: PublicKey) -> Bool { roster.leave(key) }

    /// Drops silent listeners; returns true when the count changed.
    public mutating func expireListeners(now: DJTime) -> Bool { roster.expire(now: now) > 0 }

    /// Applies a vote and returns the acknowledgement to send back.
    public mutating func vote(
        from key: PublicKey, trackID: String, choice: VoteChoice, sequence: UInt64, address: String = "",
        votersPerAddress: Int = .max
    ) -> VoteAck {
        let status = votes.apply(
            voter: key, trackID: trackID, choice: choice, from: address, votersPerAddress: votersPerAddress,
            sequence: sequence)
        return VoteAck(
            voteSequence: sequence, status: status, trackID: votes.trackID ?? "", choice: votes.choice(of: key),
            tally: votes.tally, listenerCount: UInt32(roster.count))
    }

    public func snapshot(now: DJTime) -> StateSnapshot {
        StateSnapshot(
            stationName: name, nowPlaying: nowPlaying, anchor: anchor, tally: votes.tally,
            listenerCount: UInt32(roster.count), queueLength: UInt32(queue.count), queueIndex: UInt32(index),
            sentAtNs: now.ns)
    }
}
