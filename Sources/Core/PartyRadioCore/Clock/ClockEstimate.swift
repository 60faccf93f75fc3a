/// The listener's current model of the DJ clock: `dj = local + offset(local)` with
/// `offset(local) = offsetNs + drift × (local − referenceLocalNs)`.
public struct ClockEstimate: Hashable, Sendable {
    /// Local instant at which `offsetNs` holds exactly (the newest sample's midpoint).
    public var referenceLocalNs: Int64
    /// DJ clock minus local clock at `referenceLocalNs`, in nanoseconds.
    public var offsetNs: Int64
    /// Frequency error of the local clock relative to the DJ clock: how many nanoseconds the offset
    /// grows per second of local time, divided by 1000 (parts per million).
    public var driftPPM: Double
    /// A rough bound on the offset error, in nanoseconds: half the width of the band of error bounds the
    /// line runs in (half the fastest outbound plus the fastest return delay), path asymmetry aside.
    public var uncertaintyNs: Int64
    /// How many samples the estimate rests on (the window).
    public var samplesUsed: Int

    public init(referenceLocalNs: Int64, offsetNs: Int64, driftPPM: Double, uncertaintyNs: Int64, samplesUsed: Int) {
        self.referenceLocalNs = referenceLocalNs
        self.offsetNs = offsetNs
        self.driftPPM = driftPPM
        self.uncertaintyNs = uncertaintyNs
        self.samplesUsed = samplesUsed
    }

    /// DJ clock minus local clock at a raw local instant (the fit's own arithmetic).
    func offset(atLocal local: Int64) -> Int64 {
        let elapsed = Double(local &- referenceLocalNs)
        return offsetNs &+ Int64((elapsed * driftPPM / 1_000_000).rounded())
    }

    /// DJ clock minus local clock at local instant `local`.
    public func offset(at local: LocalTime) -> Int64 { offset(atLocal: local.ns) }

    /// The DJ-clock reading that corresponds to local instant `local`.
    public func djTime(at local: LocalTime) -> DJTime { DJTime(ns: local.ns &+ offset(atLocal: local.ns)) }

    /// The local instant at which the DJ clock reads `dj` (inverse of `djTime(at:)`).
    public func localTime(at dj: DJTime) -> LocalTime {
        // dj = local + offsetNs + d·(local − ref)  ⇒  local − ref = (dj − ref − offsetNs) / (1 + d)
        let sinceReference = Double(dj.ns &- referenceLocalNs &- offsetNs) / (1 + driftPPM / 1_000_000)
        return LocalTime(ns: referenceLocalNs &+ Int64(sinceReference.rounded()))
    }
}
