/// What a node knows about where the station is: the last anchor and track length, and how its
/// own clock maps to the DJ clock (none on the DJ itself, where they are one clock).
///
/// A value: the runtime hands it to the player driver, which asks it where the station is at
/// any local instant without going back to the machine.
public struct StationClockView: Hashable, Sendable {
    public var anchor: PlaybackAnchor
    /// The track playing (nil: nothing).
    public var track: Track?
    /// This node's estimate of the DJ clock; nil on the DJ itself.
    public var estimate: ClockEstimate?
    public let isDJ: Bool

    public init(snapshot: StateSnapshot, estimate: ClockEstimate?, isDJ: Bool) {
        anchor = snapshot.anchor
        track = snapshot.nowPlaying
        self.estimate = estimate
        self.isDJ = isDJ
    }

    public var durationNs: Int64? { track?.durationNs }

    /// The DJ clock at local instant `local`, or nil while a listener has no estimate yet.
    public func djTime(at local: LocalTime) -> DJTime? {
        isDJ ? DJTime(onTheDJ: local) : estimate?.djTime(at: local)
    }

    /// The station position at local instant `local`, or nil while the DJ clock is unknown.
    public func stationPosition(at local: LocalTime) -> Int64? {
        djTime(at: local).map { anchor.position(at: $0, durationNs: durationNs) }
    }
}

extension Track {
    /// The track's length in nanoseconds (0: unknown).
    public var durationNs: Int64 { Int64(durationMs) * Nanos.perMillisecond }
}

extension StateSnapshot {
    /// The DJ clock when the snapshot was sent.
    public var sentAt: DJTime { DJTime(ns: sentAtNs) }

    /// The station position at DJ instant `dj`.
    public func position(at dj: DJTime) -> Int64 {
        anchor.position(at: dj, durationNs: nowPlaying?.durationNs)
    }
}
