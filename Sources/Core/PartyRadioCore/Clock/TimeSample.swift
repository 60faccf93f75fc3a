/// One NTP-style four-timestamp exchange between a listener and the DJ.
///
/// `t1` and `t4` are read from the listener's local clock, `t2` and `t3` from the DJ's clock,
/// all in nanoseconds. The classic formulas (see docs/CLOCK-SYNC.md):
///
///     offset θ = ((t2 − t1) + (t3 − t4)) / 2      // DJ clock minus local clock
///     delay  δ = (t4 − t1) − (t3 − t2)            // network round trip, DJ's hold time removed
///
/// Whatever the path asymmetry, the true offset lies within θ ± δ/2, which is why samples with a
/// small round trip are the ones to trust.
public struct TimeSample: Hashable, Sendable {
    /// Listener sends the ping (local clock).
    public var t1: Int64
    /// DJ receives the ping (DJ clock).
    public var t2: Int64
    /// DJ sends the pong (DJ clock).
    public var t3: Int64
    /// Listener receives the pong (local clock).
    public var t4: Int64

    public init(t1: LocalTime, t2: DJTime, t3: DJTime, t4: LocalTime) {
        self.t1 = t1.ns
        self.t2 = t2.ns
        self.t3 = t3.ns
        self.t4 = t4.ns
    }

    /// Network round trip without the DJ's hold time, in nanoseconds (may be negative for a bogus sample).
    public var delayNs: Int64 { (t4 &- t1) &- (t3 &- t2) }

    /// The DJ clock minus the local clock at `midpointNs`, in nanoseconds.
    public var offsetNs: Int64 {
        // Halve each difference first: the sum of two multi-second differences cannot overflow then,
        // and the rounding error is at most one nanosecond.
        let a = t2 &- t1
        let b = t3 &- t4
        return a / 2 + b / 2 + (a % 2 + b % 2) / 2
    }

    /// The local instant the offset refers to: the middle of the exchange.
    public var midpointNs: Int64 { t1 + (t4 &- t1) / 2 }

    /// Whether the timestamps can describe a real exchange: the reply came after the ping, the DJ
    /// did not hold it longer than the whole round trip, and nothing is absurdly long (> 10 s).
    public var isPlausible: Bool {
        let roundTrip = t4 &- t1
        let hold = t3 &- t2
        return roundTrip >= 0 && hold >= 0 && delayNs >= 0 && roundTrip < 10 * Nanos.perSecond
    }
}
