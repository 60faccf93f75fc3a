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

    /// How far ahead to prepare a load: twice the last time a load took to get ready, plus a
    /// margin, within 150 ms … 3 s. The first load of a player has no such time: it is loaded
    /// where the station is (lead 0) and, once it is open, seeked ahead by ``seekLead(lastReadyNs:)``,
    /// so that the first audio waits for what opening the file and the output really took, not
    /// for a guess that must cover the slowest machine.
    public static func loadLead(lastReadyNs: Int64?) -> Int64 {
        guard let ready = lastReadyNs else { return 0 }
        return min(3 * Nanos.perSecond, max(150 * Nanos.perMillisecond, 2 * ready + 50 * Nanos.perMillisecond))
    }

    /// How far ahead to prepare a paused seek of an open file (a resume, a correction, the first
    /// start after its load): twice the last time a seek took to get ready, plus a margin, within
    /// 50 ms … 3 s; 60 ms before any was measured (a seek in a paused file is ready within about
    /// 10 ms, the runtime looks every 10 ms while a start is prepared).
    public static func seekLead(lastReadyNs: Int64?) -> Int64 {
        guard let ready = lastReadyNs else { return 60 * Nanos.perMillisecond }
        return min(3 * Nanos.perSecond, max(50 * Nanos.perMillisecond, 2 * ready + 30 * Nanos.perMillisecond))
    }
}
