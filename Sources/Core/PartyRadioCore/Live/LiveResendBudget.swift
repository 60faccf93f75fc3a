/// How many live frames the DJ sends again to each listener (docs/LIVE.md, "Resend requests"): a
/// token bucket per listener key, so that no listener — a broken one or a hostile one — can make
/// the DJ send more than a fraction of the stream again, and the DJ's uplink stays one stream's
/// worth plus that fraction per listener at most.
public struct LiveResendBudget: Sendable {
    /// Frames a second a listener may have sent again (half of a 10 ms stream: enough for 25 %
    /// loss with a retry), and how many at once.
    public static let framesPerSecond: Int64 = 50
    public static let burst: Int64 = 32

    private var buckets: [PublicKey: (frames: Double, atNs: Int64)] = [:]
    /// Frames asked for beyond the budget, not sent.
    public private(set) var refused: UInt64 = 0

    public init() {}

    /// How many of `count` frames may go to `key` now (the rest are refused and counted).
    public mutating func take(_ count: Int, for key: PublicKey, nowNs: Int64) -> Int {
        let burst = Double(Self.burst)
        var bucket = buckets[key] ?? (burst, nowNs)
        let elapsedSeconds = Double(max(0, nowNs &- bucket.atNs)) / Double(Nanos.perSecond)
        bucket.frames = min(burst, bucket.frames + elapsedSeconds * Double(Self.framesPerSecond))
        bucket.atNs = nowNs
        let asked = max(0, count)
        let granted = min(asked, Int(bucket.frames))
        bucket.frames -= Double(granted)
        buckets[key] = bucket
        refused += UInt64(asked - granted)
        return granted
    }

    /// Forgets the listeners `keep` says are gone (a bounded table: only current listeners stay).
    public mutating func prune(keeping keep: (PublicKey) -> Bool) {
        buckets = buckets.filter { keep($0.key) }
    }
}
