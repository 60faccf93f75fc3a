/// A listener's buffer of live frames (docs/LIVE.md, "The jitter buffer and the playout rule"):
/// frames and repairs go in as they arrive; out come, in frame order, the decisions of what to
/// play, each at its time.
///
/// **The rule.** A frame whose first sample has station time `T` plays at `T + delay`. A frame
/// that can no longer play at its time is dropped and counted `late`; a frame whose time comes
/// and that is not there is rebuilt from its FEC block when the block has k shards, else
/// concealed. Every frame number the buffer passes is exactly one of played, recovered or
/// concealed, and counted. Pure: time is a parameter, the erasure code is injected.
public struct LiveJitterBuffer: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The station's delay: a frame plays this long after its first sample's time.
        public var delayNs: Int64
        /// Frames kept ahead of the next to play; a frame further ahead is `tooFarAhead`.
        public var span: Int
        /// Concealed in a row this long, the buffer stops (an underrun) until frames come again.
        public var silenceAfterNs: Int64

        public init(delayNs: Int64 = 60_000_000, span: Int = 256, silenceAfterNs: Int64 = 200_000_000) {
            self.delayNs = delayNs
            self.span = span
            self.silenceAfterNs = silenceAfterNs
        }
    }

    /// What became of an inserted frame or repair.
    public enum Insertion: Equatable, Sendable {
        case kept
        /// Its turn or its time has passed (a late frame is still kept as FEC material for its block).
        case late
        case duplicate
        case tooFarAhead
        /// A repair whose block disagrees with the block's first repair (k, m, shard length, or an
        /// overlapping block).
        case inconsistent
    }

    public let settings: Settings
    public private(set) var counters = LiveCounters()
    private let code: any ErasureCode

    private struct Held: Sendable {
        var frame: LiveFrame
        var recovered: Bool
    }

    private struct Block: Sendable {
        var dataCount: Int
        var parityCount: Int
        var shardLength: Int
        var parity: [Int: [UInt8]] = [:]
        var failureCounted = false
    }

    /// The next frame number to release, and the time it has when it is missing.
    private struct Position: Sendable {
        var sequence: UInt64
        var expected: DJTime
        var duration: LiveFrameDuration
    }

    private var frames: [UInt64: Held] = [:]
    private var blocks: [UInt64: Block] = [:]
    private var position: Position?
    private var releasedSinceStart = false
    private var lastReleased: UInt64?
    private var concealedRunNs: Int64 = 0

    public init(settings: Settings = Settings(), code: any ErasureCode) {
        self.settings = settings
        self.code = code
    }

    /// The station time at which the next frame plays (what ``next(at:)`` waits for); nil while
    /// the buffer has no stream.
    public var nextDue: DJTime? {
        guard let position else { return nil }
        return time(of: position) + settings.delayNs
    }

    /// Takes a frame that arrived when the station clock read `now`.
    @discardableResult
    public mutating func insert(_ frame: LiveFrame, now: DJTime) -> Insertion {
        counters.received += 1
        let result = place(frame, now: now)
        switch result {
        case .kept: break
        case .late: counters.late += 1
        case .duplicate: counters.duplicate += 1
        case .tooFarAhead: counters.tooFarAhead += 1
        case .inconsistent: break
        }
        return result
    }

    private mutating func place(_ frame: LiveFrame, now: DJTime) -> Insertion {
        let sequence = frame.sequence
        if let lastReleased, sequence <= lastReleased {
            keepAsMaterial(frame)
            return .late
        }
        // Its whole time has passed: it can no longer play at its time.
        if frame.firstSample + settings.delayNs + frame.duration.ns <= now {
            keepAsMaterial(frame)
            return .late
        }
        guard var position else {
            self.position = Position(sequence: sequence, expected: frame.firstSample, duration: frame.duration)
            releasedSinceStart = false
            frames[sequence] = Held(frame: frame, recovered: false)
            return .kept
        }
        if sequence < position.sequence {
            // Before anything plays, an earlier frame moves the start back to it.
            guard !releasedSinceStart, position.sequence - sequence < UInt64(settings.span) else {
                keepAsMaterial(frame)
                return .late
            }
            position = Position(sequence: sequence, expected: frame.firstSample, duration: frame.duration)
            self.position = position
            frames[sequence] = Held(frame: frame, recovered: false)
            return .kept
        }
        guard sequence - position.sequence < UInt64(settings.span) else { return .tooFarAhead }
        if let held = frames[sequence], !held.recovered { return .duplicate }
        frames[sequence] = Held(frame: frame, recovered: false)
        return .kept
    }

    /// A late frame may still rebuild a later frame of its block.
    private mutating func keepAsMaterial(_ frame: LiveFrame) {
        guard frames[frame.sequence] == nil, blocks.contains(where: { Self.contains($0, frame.sequence) }) else {
            return
        }
        frames[frame.sequence] = Held(frame: frame, recovered: false)
    }

    /// Takes a repair that arrived when the station clock read `now`.
    @discardableResult
    public mutating func insert(_ repair: LiveRepair, now: DJTime) -> Insertion {
        counters.repairs += 1
        let result = place(repair)
        switch result {
        case .kept: break
        case .late: counters.repairsLate += 1
        case .duplicate: counters.repairsDuplicate += 1
        case .tooFarAhead: counters.repairsTooFarAhead += 1
        case .inconsistent: counters.repairsInconsistent += 1
        }
        return result
    }

    private mutating func place(_ repair: LiveRepair) -> Insertion {
        let first = repair.firstSequence
        let last = repair.sequences.upperBound
        if let position {
            if last < position.sequence { return .late }
            guard first < position.sequence || first - position.sequence < UInt64(settings.span) else {
                return .tooFarAhead
            }
        } else if let lastReleased, last <= lastReleased {
            return .late
        }
        if var block = blocks[first] {
            guard block.dataCount == repair.dataCount, block.parityCount == repair.parityCount,
                block.shardLength == repair.shard.count
            else { return .inconsistent }
            guard block.parity[repair.parityIndex] == nil else { return .duplicate }
            block.parity[repair.parityIndex] = repair.shard
            blocks[first] = block
            return .kept
        }
        let overlaps = blocks.contains { start, block in
            start <= last && first <= start + UInt64(block.dataCount - 1)
        }
        guard !overlaps, blocks.count < settings.span else { return .inconsistent }
        var block = Block(dataCount: repair.dataCount, parityCount: repair.parityCount, shardLength: repair.shard.count)
        block.parity[repair.parityIndex] = repair.shard
        blocks[first] = block
        return .kept
    }

    /// The decision for the next frame once its playout time is at or before `horizon` (the
    /// station time at which what the output is given now will be heard); nil before.
    public mutating func next(at horizon: DJTime) -> LivePlayout? {
        guard let current = position else { return nil }
        let sequence = current.sequence
        guard time(of: current) + settings.delayNs <= horizon else { return nil }
        if frames[sequence] == nil { recover(sequence) }
        let decision: LivePlayout
        if let held = frames[sequence] {
            decision = held.recovered ? .recovered(held.frame) : .play(held.frame)
            if held.recovered { counters.recovered += 1 } else { counters.played += 1 }
            concealedRunNs = 0
        } else {
            decision = .conceal(sequence: sequence, firstSample: current.expected, duration: current.duration)
            counters.concealed += 1
            concealedRunNs += current.duration.ns
        }
        lastReleased = sequence
        releasedSinceStart = true
        position = Position(
            sequence: sequence &+ 1, expected: decision.firstSample + decision.duration.ns, duration: decision.duration)
        prune()
        if concealedRunNs >= settings.silenceAfterNs {
            counters.underruns += 1
            concealedRunNs = 0
            restartAtEarliestHeld()
        }
        return decision
    }

    /// The station time a decision's audio plays at.
    public func playoutTime(of decision: LivePlayout) -> DJTime { decision.firstSample + settings.delayNs }

    // MARK: Inside

    private func time(of position: Position) -> DJTime {
        frames[position.sequence]?.frame.firstSample ?? position.expected
    }

    private static func contains(_ entry: (key: UInt64, value: Block), _ sequence: UInt64) -> Bool {
        entry.key <= sequence && sequence - entry.key < UInt64(entry.value.dataCount)
    }

    /// Rebuilds the missing frames of `sequence`'s block when it has k shards.
    private mutating func recover(_ sequence: UInt64) {
        guard let (first, block) = blocks.first(where: { Self.contains($0, sequence) }) else { return }
        let k = block.dataCount
        var shards: [[UInt8]?] = Array(repeating: nil, count: k + block.parityCount)
        var consistent = true
        for index in 0..<k {
            guard let held = frames[first + UInt64(index)] else { continue }
            guard let shard = LiveFEC.shard(of: held.frame, length: block.shardLength) else {
                consistent = false
                continue
            }
            shards[index] = shard
        }
        for (index, parity) in block.parity where index < block.parityCount { shards[k + index] = parity }
        var rebuilt = false
        if consistent, shards.compactMap({ $0 }).count >= k, let data = code.recover(shards, dataCount: k),
            data.count == k
        {
            rebuilt = true
            for index in 0..<k where shards[index] == nil {
                guard let frame = LiveFEC.frame(fromShard: data[index], sequence: first + UInt64(index)) else {
                    rebuilt = false
                    continue
                }
                frames[frame.sequence] = Held(frame: frame, recovered: true)
            }
        }
        if !rebuilt, !block.failureCounted {
            blocks[first]?.failureCounted = true
            counters.undecodableBlocks += 1
        }
    }

    /// Forgets what no block or frame still to play needs.
    private func keepsFrame(_ sequence: UInt64, next: UInt64) -> Bool {
        sequence >= next || next - sequence <= UInt64(LiveRepair.dataCountRange.upperBound)
    }

    private mutating func prune() {
        guard let next = position?.sequence else { return }
        // `start + k > next`, without the sum: a block may end on UInt64's last number.
        blocks = blocks.filter { start, block in start >= next || next - start < UInt64(block.dataCount) }
        frames = frames.filter { sequence, _ in keepsFrame(sequence, next: next) }
    }

    /// After a silence the buffer waits for frames; one already here after the last released starts it.
    private mutating func restartAtEarliestHeld() {
        releasedSinceStart = false
        let last = lastReleased ?? 0
        guard
            let earliest = frames.values.filter({ $0.frame.sequence > last && !$0.recovered })
                .min(by: { $0.frame.sequence < $1.frame.sequence })
        else {
            position = nil
            return
        }
        position = Position(
            sequence: earliest.frame.sequence, expected: earliest.frame.firstSample,
            duration: earliest.frame.duration)
    }
}

/// One decision of a ``LiveJitterBuffer``: the frame to decode, or a frame to conceal.
public enum LivePlayout: Equatable, Sendable {
    case play(LiveFrame)
    /// A frame that did not arrive, rebuilt from its FEC block.
    case recovered(LiveFrame)
    /// Nothing to decode: the decoder's packet-loss concealment fills `duration`.
    case conceal(sequence: UInt64, firstSample: DJTime, duration: LiveFrameDuration)

    public var sequence: UInt64 {
        switch self {
        case .play(let frame), .recovered(let frame): frame.sequence
        case .conceal(let sequence, _, _): sequence
        }
    }

    public var firstSample: DJTime {
        switch self {
        case .play(let frame), .recovered(let frame): frame.firstSample
        case .conceal(_, let time, _): time
        }
    }

    public var duration: LiveFrameDuration {
        switch self {
        case .play(let frame), .recovered(let frame): frame.duration
        case .conceal(_, _, let duration): duration
        }
    }
}

/// What a listener's live buffer counted (docs/LIVE.md): every frame number passed is one of
/// played, recovered or concealed.
public struct LiveCounters: Sendable, Equatable {
    /// Frames inserted, whatever became of them.
    public var received = 0
    public var played = 0
    public var recovered = 0
    public var concealed = 0
    public var late = 0
    public var duplicate = 0
    public var tooFarAhead = 0
    /// Repairs inserted, whatever became of them.
    public var repairs = 0
    public var repairsLate = 0
    public var repairsDuplicate = 0
    public var repairsTooFarAhead = 0
    public var repairsInconsistent = 0
    /// Blocks a missing frame could not be rebuilt from (too few shards, or shards that disagree).
    public var undecodableBlocks = 0
    /// Times the buffer stopped after a silence of concealment.
    public var underruns = 0

    public init() {}

    /// Frame numbers passed.
    public var released: Int { played + recovered + concealed }
}
