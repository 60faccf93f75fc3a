/// Where the station is: `positionNs` into the track at DJ-clock instant `djTime`, moving at `rate`.
///
/// The whole of "play the same track at the same position" rests on this one formula:
/// `position(t) = positionNs + (t - djTime) * rate`, clamped to the track. A paused
/// station has rate 0. Rates travel as millionths (1_000_000 = normal speed).
public struct PlaybackAnchor: Hashable, Sendable {
    public static let normalRate: UInt32 = 1_000_000

    public var djTime: DJTime
    public var positionNs: Int64
    public var rateMicros: UInt32

    public init(djTime: DJTime, positionNs: Int64, rateMicros: UInt32) {
        self.djTime = djTime
        self.positionNs = positionNs
        self.rateMicros = rateMicros
    }

    public static func playing(at position: Int64, djTime: DJTime) -> Self {
        Self(djTime: djTime, positionNs: position, rateMicros: normalRate)
    }

    public static func paused(at position: Int64, djTime: DJTime) -> Self {
        Self(djTime: djTime, positionNs: position, rateMicros: 0)
    }

    public var isPaused: Bool { rateMicros == 0 }

    /// The position at DJ-clock instant `djTime`, never below zero nor past `durationNs` (when given).
    public func position(at instant: DJTime, durationNs: Int64? = nil) -> Int64 {
        // 128-bit arithmetic: values from the wire may be anything, and must never trap.
        let elapsed = Int128(instant.ns) - Int128(djTime.ns)
        let advanced = elapsed * Int128(rateMicros) / Int128(Self.normalRate)
        var position = Int64(clamping: Int128(positionNs) + advanced)
        position = max(0, position)
        if let durationNs, durationNs > 0 { position = min(position, durationNs) }
        return position
    }

    /// The DJ-clock instant at which the track reaches `durationNs`, or nil while paused.
    public func djTime(whenPositionReaches target: Int64) -> DJTime? {
        guard rateMicros > 0 else { return nil }
        let remaining = (Int128(target) - Int128(positionNs)) * Int128(Self.normalRate) / Int128(rateMicros)
        return DJTime(ns: Int64(clamping: Int128(djTime.ns) + remaining))
    }
}
