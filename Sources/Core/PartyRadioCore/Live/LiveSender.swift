/// The DJ's side of the live carrier (docs/LIVE.md): each stamped frame goes out at once, and
/// after every k frames in a row the block's m repairs, while some listener loses frames
/// (``Protection``). A stream that breaks (a jump in the frame numbers, the source gone silent)
/// closes the block it was filling with the frames it has, so that no repair ever covers frames
/// that were not sent. Pure: the erasure code is injected.
public struct LiveSender: Sendable {
    /// When a block's repairs go out (docs/LIVE.md, "Repairs while frames are lost").
    public enum Protection: Hashable, Sendable {
        /// After every block.
        case always
        /// After the blocks that close within ``LiveSender/lossHoldNs`` of a listener's report of
        /// lost frames (a heartbeat's count or a resend request): on clean links the stream is the
        /// frames alone, and a single loss is asked for again.
        case onLoss
    }

    /// How long one report of lost frames keeps the repairs going, in the stream's own time.
    public static let lossHoldNs: Int64 = 10_000_000_000

    /// How the DJ sends: the frame length, the station's delay, the block's k and m.
    public struct Settings: Hashable, Sendable {
        public var duration: LiveFrameDuration
        public var bitrate: Int
        /// The station's delay (`dj --latency`), which every frame carries to the listeners.
        public var delayMs: UInt16
        public var dataCount: Int
        public var parityCount: Int
        public var protection: Protection

        /// - Parameters:
        ///   - delayMs: the station's delay, carried by every frame; it also sizes the block
        ///     (``LiveFEC/dataCount(delayNs:frame:marginNs:)``). Kept within ``LiveFrame/delayRangeMs``.
        ///   - protection: when repairs go out; ``Protection/onLoss`` unless a test says otherwise.
        public init(
            duration: LiveFrameDuration = .ms10, bitrate: Int = 128_000, delayMs: UInt16 = LiveFrame.defaultDelayMs,
            parityCount: Int = 2, protection: Protection = .onLoss
        ) {
            self.duration = duration
            self.bitrate = bitrate
            self.delayMs = min(max(delayMs, LiveFrame.delayRangeMs.lowerBound), LiveFrame.delayRangeMs.upperBound)
            dataCount = LiveFEC.dataCount(delayNs: Int64(self.delayMs) * 1_000_000, frame: duration)
            self.parityCount = min(
                max(parityCount, LiveRepair.parityCountRange.lowerBound),
                LiveRepair.parityCountRange.upperBound)
            self.protection = protection
        }
    }

    public let settings: Settings
    private let code: any ErasureCode
    /// The frames of the block being filled, in a row.
    private var block: [LiveFrame] = []
    /// Frames and repairs sent, and blocks closed short.
    public private(set) var framesSent: UInt64 = 0
    public private(set) var repairsSent: UInt64 = 0
    public private(set) var shortBlocks: UInt64 = 0
    /// Blocks closed without repairs (``Protection/onLoss`` with no loss reported), and reports of
    /// lost frames taken.
    public private(set) var blocksUnprotected: UInt64 = 0
    public private(set) var lossReports: UInt64 = 0
    /// Reports that numbers this DJ skipped explain (``lossReported(count:)``).
    public private(set) var lossReportsExplained: UInt64 = 0
    /// Repairs go out for blocks whose last frame is stamped before this (stream time).
    private var protectedUntil: DJTime?
    /// Numbers skipped in the stream lately (a capture that slipped): when, and how many. A
    /// listener finds them missing as it finds lost frames.
    private var skips: [(at: DJTime, count: UInt64)] = []
    /// The newest frame's stamp: the stream's own clock.
    private var newest: DJTime?
    /// The frames sent last, oldest first, for resend requests (``recentNs`` of them).
    private var recent: [LiveFrame] = []
    /// Frames sent again on a listener's request, and asked for but no longer (or never) kept.
    public private(set) var framesResent: UInt64 = 0
    public private(set) var resendsMissed: UInt64 = 0

    /// How far back resend requests are answered: past any station's delay (a frame asked for
    /// later would be played too late anyway), and a bound on what a request can make the DJ send.
    public static let recentNs: Int64 = 500_000_000

    public init(settings: Settings, code: any ErasureCode) {
        self.settings = settings
        self.code = code
    }

    /// What to send for `frame`, in order: the repairs of a block a jump broke off (if any), the
    /// frame, and the repairs of the block it completes.
    public mutating func send(_ frame: LiveFrame) -> [Message] {
        var frame = frame
        frame.delayMs = settings.delayMs  // the station's, whatever the capture stamped
        var out: [Message] = []
        // A skip as listeners count it: a jump wider than a resend request is a new stream.
        if let last = recent.last, frame.sequence > last.sequence &+ 1,
            frame.sequence - last.sequence <= UInt64(LiveResend.span)
        {
            skips.append((frame.firstSample, frame.sequence - last.sequence - 1))
        }
        if let last = block.last, frame.sequence != last.sequence &+ 1 { out += closeBlock() }
        block.append(frame)
        newest = frame.firstSample
        framesSent += 1
        recent.append(frame)
        let keep = max(1, Int(Self.recentNs / settings.duration.ns))
        if recent.count > keep * 2 { recent.removeFirst(recent.count - keep) }  // amortised
        out.append(.liveFrame(frame))
        if block.count == settings.dataCount { out += closeBlock() }
        return out
    }

    /// The source went silent: the repairs of the frames sent since the last full block.
    public mutating func flush() -> [Message] { closeBlock() }

    /// How long skipped numbers explain a heartbeat's count: past a heartbeat's interval, so that a
    /// skip is never taken for a loss by the heartbeat after it.
    public static let skipMemoryNs: Int64 = 2_500_000_000

    /// A listener's heartbeat counted `count` frames missing (nil: a loss known for sure, a resend
    /// of a frame that was sent): the blocks that close in the next ``lossHoldNs`` of the stream
    /// get their repairs. A count no larger than the numbers this DJ skipped lately is those skips,
    /// not a loss (counted as explained). Before the first frame there is nothing to lose.
    public mutating func lossReported(count: Int? = nil) {
        if let newest { skips.removeAll { newest.ns - $0.at.ns > Self.skipMemoryNs } }
        if let count, count <= skips.reduce(0, { $0 + Int($1.count) }) {
            lossReportsExplained += 1
            return
        }
        lossReports += 1
        if let newest { protectedUntil = newest + Self.lossHoldNs }
    }

    /// Whether the block being closed gets its repairs.
    private func protects() -> Bool {
        guard settings.protection == .onLoss else { return true }
        guard let protectedUntil, let last = block.last?.firstSample else { return false }
        return last < protectedUntil
    }

    /// The frames of these numbers (a resend request's) that were sent within ``recentNs``,
    /// ascending; the rest are counted as missed.
    public mutating func resend(_ wanted: [UInt64]) -> [LiveFrame] {
        let keep = max(1, Int(Self.recentNs / settings.duration.ns))
        let kept = recent.suffix(keep)
        guard let first = kept.first?.sequence, let last = kept.last?.sequence else {
            resendsMissed += UInt64(wanted.count)
            return []
        }
        var frames: [LiveFrame] = []
        for sequence in wanted where sequence >= first && sequence <= last {
            // Numbers rise by one within a stream and jump between streams: a search, not an index.
            if let index = kept.firstIndex(where: { $0.sequence == sequence }) { frames.append(kept[index]) }
        }
        framesResent += UInt64(frames.count)
        resendsMissed += UInt64(wanted.count - frames.count)
        // A frame that was sent and did not arrive: a loss (a skipped number is none).
        if !frames.isEmpty { lossReported() }
        return frames
    }

    private mutating func closeBlock() -> [Message] {
        guard !block.isEmpty else { return [] }
        defer { block.removeAll(keepingCapacity: true) }
        if block.count < settings.dataCount { shortBlocks += 1 }
        guard protects() else {
            blocksUnprotected += 1
            return []
        }
        let repairs = LiveFEC.repairs(for: block, parityCount: settings.parityCount, code: code)
        repairsSent += UInt64(repairs.count)
        return repairs.map(Message.liveRepair)
    }
}
