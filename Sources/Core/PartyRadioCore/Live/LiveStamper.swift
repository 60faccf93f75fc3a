/// Numbers and times a live source's frames as the DJ captures them (docs/LIVE.md, "Time" and
/// "Sequence"), and paces a source that delivers faster than real time. Pure: the capture thread
/// hands it the instant each frame's last sample was read, on the station clock.
///
/// The rule:
/// - A frame's last sample was written at `read − backlog` at the latest: the instant it was
///   read, less the audio the writer has already put in the pipe after it (the capture was late,
///   not the writer). The first frame of a stream starts one frame before that; after it each
///   frame follows the last one exactly (`previous + f`), so that the stamps advance by the frame
///   length whatever the jitter of the reads.
/// - A frame written later than that by more than ``slipNs`` (the writer stalled a moment, or its
///   clock runs slower than the station's) skips whole frame numbers and times to catch up: the
///   listeners conceal the frames skipped, the stamps stay on the capture's time. A capture that
///   was late itself finds the pipe full behind the frame and skips nothing.
/// - A read later by ``gapNs`` or more (the source paused, a writer came back) starts a new
///   stream: its first frame is numbered by the real-time clock in units of 2.5 ms (never below
///   the last number plus one) and timed by its read.
/// - A source that delivers faster than real time is read no sooner than the moment the next
///   frame's last sample is due (``nextReadNotBefore``): a frame is never stamped in the future.
public struct LiveStamper: Sendable {
    public let duration: LiveFrameDuration
    /// Reads this much later than due skip frames to catch up.
    public let slipNs: Int64
    /// Reads this much later than due start a new stream (the jitter buffer's silence).
    public static let gapNs: Int64 = 200_000_000
    /// The unit of the first frame number of a stream: the shortest frame.
    public static let numberUnitNs: Int64 = 2_500_000

    private var last: (sequence: UInt64, firstSample: DJTime)?

    public init(duration: LiveFrameDuration) {
        self.duration = duration
        slipNs = max(2 * duration.ns, 20_000_000)
    }

    /// The number and time of the frame whose last sample was read at `read`, with `backlogNs` of
    /// audio already waiting behind it; `realTimeNs` is the machine's real-time clock (which
    /// numbers a new stream).
    public mutating func stamp(readAt read: DJTime, backlogNs: Int64 = 0, realTimeNs: Int64) -> (
        sequence: UInt64, firstSample: DJTime
    ) {
        let natural = DJTime(ns: read.ns - max(0, backlogNs) - duration.ns)
        let stamped: (sequence: UInt64, firstSample: DJTime)
        if let last {
            let due = last.firstSample.ns + duration.ns
            let late = natural.ns - due
            if late >= Self.gapNs {
                stamped = (Self.firstNumber(after: last.sequence, realTimeNs: realTimeNs), natural)
            } else if late > slipNs {
                let skipped = late / duration.ns
                stamped = (last.sequence + 1 + UInt64(skipped), DJTime(ns: due + skipped * duration.ns))
            } else {
                stamped = (last.sequence + 1, DJTime(ns: due))
            }
        } else {
            stamped = (Self.firstNumber(after: nil, realTimeNs: realTimeNs), natural)
        }
        last = stamped
        return stamped
    }

    /// The source went away: the next frame starts a new stream.
    public mutating func interrupt() {
        if let last { self.last = (last.sequence, DJTime(ns: .min / 2)) }
    }

    /// The earliest instant to read the next frame: when its last sample is due. Nil before the
    /// first frame (read at once).
    public var nextReadNotBefore: DJTime? {
        guard let last, last.firstSample.ns > .min / 2 else { return nil }
        return DJTime(ns: last.firstSample.ns + 2 * duration.ns)
    }

    static func firstNumber(after previous: UInt64?, realTimeNs: Int64) -> UInt64 {
        let clock = UInt64(max(0, realTimeNs / numberUnitNs))
        guard let previous else { return clock }
        return max(previous &+ 1, clock)
    }
}
