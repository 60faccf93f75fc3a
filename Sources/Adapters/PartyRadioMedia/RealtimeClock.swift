import Glibc
import PartyRadioCore

/// The machine's CLOCK_REALTIME in nanoseconds since the epoch.
public struct RealtimeClock: NanoClock {
    public init() {}

    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
