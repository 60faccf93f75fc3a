/// Which live frames a listener asks the DJ for again (docs/LIVE.md, "Resend requests"). A frame
/// is missing once a later one, or a repair of a block that holds it, has come: the DJ sent it
/// and it was lost on the way. The listener asks at once and again every ``Settings/retryNs``
/// while there is time for the answer to be played: until the frame's own time plus the
/// station's delay, less what the player needs before that (``Settings/leadNs``). No timing
/// guesses: a frame not sent yet is never asked for, whatever the source's pace.
///
/// Pure: times are station-clock instants the caller gives (the listener's estimate of the DJ's).
public struct LiveGapTracker: Sendable {
    public struct Settings: Hashable, Sendable {
        /// The station's delay until a frame says it: a frame stamped `T` is heard at `T + delayNs`.
        public var delayNs: Int64
        /// What this listener adds to the station's delay (`listen --latency-extra`).
        public var extraNs: Int64
        /// How long before `T + delayNs` the player takes its decision for a frame: the output's
        /// latency, the codec's delay and the player's look-ahead, with room for the answer's trip.
        public var leadNs: Int64
        /// Between two requests for one frame.
        public var retryNs: Int64
        /// A gap wider than this is a new stream or a DJ that jumped, never asked for.
        public var maxGap: UInt64

        public init(
            delayNs: Int64 = 60_000_000, extraNs: Int64 = 0, leadNs: Int64 = 32_000_000,
            retryNs: Int64 = 4_000_000, maxGap: UInt64 = UInt64(LiveResend.span)
        ) {
            self.delayNs = delayNs
            self.extraNs = extraNs
            self.leadNs = leadNs
            self.retryNs = retryNs
            self.maxGap = maxGap
        }
    }

    private struct Missing: Sendable {
        /// The frame's own time, and when to ask next.
        var firstSampleNs: Int64
        var nextAskNs: Int64
    }

    public let settings: Settings
    /// When a frame is heard after its stamp here: the station's delay as its latest frame says
    /// (``Settings/delayNs`` before the first), plus ``Settings/extraNs``.
    public private(set) var delayNs: Int64
    /// The highest frame number known sent, with its first sample's time and its frame length.
    private var highest: (sequence: UInt64, firstSampleNs: Int64, durationNs: Int64)?
    private var missing: [UInt64: Missing] = [:]
    /// Frame numbers asked for (each ask counted), and frames that came after they were missed.
    public private(set) var asked: UInt64 = 0
    public private(set) var arrivedAfterAsking: UInt64 = 0
    /// Frame numbers found missing (lost on the way, or overtaken by a later frame), and those
    /// not yet told to the DJ (``takeLost()``).
    public private(set) var lost: UInt64 = 0
    private var lostUntold: UInt64 = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
        delayNs = settings.delayNs &+ settings.extraNs
    }

    /// The frames missing now and still worth asking for.
    public var missingCount: Int { missing.count }

    /// A frame came (from the group, a unicast copy or a resend).
    public mutating func received(_ frame: LiveFrame) {
        delayNs = frame.delayNs &+ settings.extraNs
        if missing.removeValue(forKey: frame.sequence) != nil { arrivedAfterAsking += 1 }
        seen(upTo: frame.sequence, firstSampleNs: frame.firstSample.ns, durationNs: frame.duration.ns)
    }

    /// A repair came: the DJ has sent every frame of its block. Its last frame left with the
    /// repair, in the same instant, and may still be on the way (jitter): only the frames before
    /// it are taken as sent; the last is missed when a later frame shows it.
    public mutating func received(_ repair: LiveRepair) {
        let last = repair.sequences.upperBound
        guard let highest, last > highest.sequence + 1, last - highest.sequence <= settings.maxGap else { return }
        // Within a stream frames follow each other by one frame length (LiveStamper).
        let steps = Int64(last - 1 - highest.sequence)
        seen(
            upTo: last - 1, firstSampleNs: highest.firstSampleNs &+ steps &* highest.durationNs,
            durationNs: highest.durationNs, include: true)
    }

    /// Notes that everything up to `sequence` was sent; the numbers between the last known and it
    /// are missing (and `sequence` itself, when only a repair says it was sent).
    private mutating func seen(upTo sequence: UInt64, firstSampleNs: Int64, durationNs: Int64, include: Bool = false) {
        guard let last = highest else {
            highest = (sequence, firstSampleNs, durationNs)
            return
        }
        guard sequence > last.sequence else { return }
        let gap = sequence - last.sequence
        if gap <= settings.maxGap {
            let end = include ? sequence : sequence - 1
            if end > last.sequence {
                for number in (last.sequence + 1)...end {
                    let time = firstSampleNs &- Int64(sequence - number) &* durationNs
                    if missing[number] == nil {
                        missing[number] = Missing(firstSampleNs: time, nextAskNs: Int64.min)
                        lost += 1
                        lostUntold += 1
                    }
                }
            }
        }
        highest = (sequence, firstSampleNs, durationNs)
    }

    /// The frames found missing since the last call, for the next heartbeat (at most `UInt16.max`).
    public mutating func takeLost() -> UInt16 {
        defer { lostUntold = 0 }
        return UInt16(min(lostUntold, UInt64(UInt16.max)))
    }

    /// The requests due at station time `now` (at most one per ``LiveResend/span`` numbers); frames
    /// whose time has passed are given up.
    public mutating func due(at now: Int64) -> [LiveResend] {
        var wanted: [UInt64] = []
        for (number, entry) in missing {
            if now > entry.firstSampleNs &+ delayNs &- settings.leadNs {
                missing[number] = nil  // too late to be played: the player conceals it
            } else if entry.nextAskNs <= now {
                wanted.append(number)
                missing[number]?.nextAskNs = now &+ settings.retryNs
            }
        }
        asked += UInt64(wanted.count)
        return LiveResend.asking(for: wanted)
    }

    /// When ``due(at:)`` has something next (station time): the next ask, or the moment a missing
    /// frame is given up; nil when nothing is missing.
    public var nextDue: Int64? {
        missing.values.map { min($0.nextAskNs, $0.firstSampleNs &+ delayNs &- settings.leadNs &+ 1) }.min()
    }
}
