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

    public init(
        name: String, queue: [Track], now: DJTime, startIndex: Int = 0, startPositionNs: Int64 = 0,
        paused: Bool = false
    ) {
        self.name = name
        self.queue = queue
        index = queue.isEmpty ? 0 : min(max(0, startIndex), queue.count - 1)
        anchor = paused ? .paused(at: startPositionNs, djTime: now) : .playing(at: startPositionNs, djTime: now)
        votes = VoteBook(trackID: queue.isEmpty ? nil : queue[index].id)
        roster = ListenerRoster()
    }

    public var nowPlaying: Track? { queue.isEmpty ? nil : queue[index] }
    public var isPaused: Bool { anchor.isPaused }

    public func positionNs(at now: DJTime) -> Int64 {
        anchor.position(at: now, durationNs: nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond })
    }

    public mutating func rename(_ newName: String) { name = newName }

    // MARK: Transport controls

    /// Skips to the next track (wrapping to the first after the last), keeping play or pause.
    public mutating func next(now: DJTime) -> Bool { move(to: index + 1, now: now) }

    /// Goes back one track (from the first, restarts it), keeping play or pause.
    public mutating func previous(now: DJTime) -> Bool { move(to: max(0, index - 1), now: now) }

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
        let wasEmpty = queue.isEmpty
        queue.append(contentsOf: tracks)
        if wasEmpty { _ = move(to: 0, now: now) }
        return true
    }

    /// What happens when a track ends: the next one (wrapping after the last: `all`), the same
    /// one again (`one`), or the next one but a stop after the last (`off`).
    public enum RepeatMode: String, Sendable, CaseIterable {
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
    /// with repeat `one`, started again); at the end of the queue with repeat `off` the station
    /// pauses at the end of the last track instead.
    public mutating func tick(now: DJTime) -> Bool {
        guard let track = nowPlaying, !anchor.isPaused else { return false }
        let durationNs = Int64(track.durationMs) * Nanos.perMillisecond
        guard durationNs > 0, let end = anchor.djTime(whenPositionReaches: durationNs), now >= end else {
            return false
        }
        if repeatMode == .off && index == queue.count - 1 {
            anchor = .paused(at: durationNs, djTime: end)
            return true
        }
        // Start the next track at the instant this one ended, so no time is lost between ticks.
        let changed = move(to: repeatMode == .one ? index : index + 1, now: end)
        anchor = .playing(at: anchor.position(at: now), djTime: now)
        return changed
    }

    /// Shuffles the tracks after the one playing (it keeps playing); `random` makes it repeatable.
    public mutating func shuffleUpcoming(using random: inout some RandomNumberGenerator) -> Bool {
        guard index + 2 < queue.count else { return false }
        queue[(index + 1)...].shuffle(using: &random)
        return true
    }

    private mutating func move(to newIndex: Int, now: DJTime) -> Bool {
        guard !queue.isEmpty else { return false }
        index = newIndex >= queue.count ? 0 : newIndex
        anchor = PlaybackAnchor(djTime: now, positionNs: 0, rateMicros: anchor.rateMicros)
        votes.reset(trackID: queue[index].id)
        return true
    }

    // MARK: Listeners and votes

    public mutating func hello(from key: PublicKey, name: String, now: DJTime) -> Bool {
        roster.join(key, name: name, now: now)
    }

    public mutating func heartbeat(from key: PublicKey, now: DJTime) -> Bool { roster.heartbeat(key, now: now) }

    public mutating func leave(from key: PublicKey) -> Bool { roster.leave(key) }

    /// Drops silent listeners; returns true when the count changed.
    public mutating func expireListeners(now: DJTime) -> Bool { roster.expire(now: now) > 0 }

    /// Applies a vote and returns the acknowledgement to send back.
    public mutating func vote(
        from key: PublicKey, trackID: String, choice: VoteChoice, sequence: UInt64
    ) -> VoteAck {
        let status = votes.apply(voter: key, trackID: trackID, choice: choice)
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
