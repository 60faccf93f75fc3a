/// When to let a prepared (paused) player go so that it starts exactly on the station.
///
/// A player is loaded or seeked, paused, to `target`, a little ahead of the station; it is
/// unpaused at the local instant the station reaches `target`. The station moves at the DJ
/// clock's rate as seen locally (1 ± a few hundred ppm), so a few fixed-point steps of
/// `t ← t + (target − station(t))` find that instant to the nanosecond.
public enum StartPlanner {
    public static func instant(reaching target: Int64, from now: Int64, stationPositionAt: (Int64) -> Int64) -> Int64 {
        var instant = now &+ (target &- stationPositionAt(now))
        for _ in 0..<3 { instant = instant &+ (target &- stationPositionAt(instant)) }
        return instant
    }

    /// How far ahead to prepare: twice the last time the player took to get ready, plus a
    /// margin, within 150 ms … 3 s.
    public static func lead(lastReadyNs: Int64?) -> Int64 {
        guard let ready = lastReadyNs else { return 300 * Nanos.perMillisecond }
        return min(3 * Nanos.perSecond, max(150 * Nanos.perMillisecond, 2 * ready + 50 * Nanos.perMillisecond))
    }
}
