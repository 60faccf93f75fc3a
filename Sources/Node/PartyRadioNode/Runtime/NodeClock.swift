import PartyRadioCore
import PartyRadioMedia

/// The node's wall clock: CLOCK_REALTIME, optionally made wrong on purpose (`--clock-offset-ms`,
/// `--clock-drift-ppm`) so that clock synchronisation can be tested on one machine whose
/// namespaces all share one kernel clock.
public struct NodeClock: LocalClock {
    public let offsetNs: Int64
    public let driftPPM: Double
    private let originNs: Int64

    public init(offsetMs: Double = 0, driftPPM: Double = 0) {
        offsetNs = Int64(offsetMs * 1_000_000)
        self.driftPPM = driftPPM
        originNs = Self.realTimeNs()
    }

    /// The machine's true CLOCK_REALTIME, untouched by the testing offsets.
    public static func realTimeNs() -> Int64 { RealtimeClock().now() }

    public func now() -> LocalTime { localTime(atRealTime: Self.realTimeNs()) }

    /// What this node's clock reads when the true clock reads `real`.
    public func localTime(atRealTime real: Int64) -> LocalTime {
        let drift = Int64(Double(real - originNs) * driftPPM / 1_000_000)
        return LocalTime(ns: real + offsetNs + drift)
    }

    /// The same clock as raw nanoseconds, for the media adapter's timestamps.
    var nanoClock: NodeNanoClock { NodeNanoClock(clock: self) }
}

/// ``NodeClock`` read as raw nanoseconds (the media adapter's `NanoClock`).
struct NodeNanoClock: NanoClock {
    let clock: NodeClock
    func now() -> Int64 { clock.now().ns }
}
