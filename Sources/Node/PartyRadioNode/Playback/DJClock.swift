import PartyRadioCore

/// This node's view of the DJ clock. On the DJ it is its own clock; on a listener it is the
/// `ClockSync` estimate fed by time pings, nil until that is synchronised.
final class DJClock {
    private let isDJ: Bool
    private(set) var sync = ClockSync()

    init(isDJ: Bool) { self.isDJ = isDJ }

    /// The DJ-clock reading at local instant `local`, or nil while not yet known.
    func djTime(local: Int64) -> Int64? {
        if isDJ { return local }
        return sync.isSynchronized ? sync.djTime(local: local) : nil
    }

    /// Feeds one completed ping/pong exchange.
    func add(_ sample: TimeSample) { sync.add(sample) }

    /// When the next ping is due, given the last one went at `last`.
    func nextPingDue(after last: Int64, now: Int64) -> Bool {
        !isDJ && now - last >= sync.suggestedPingIntervalNs(atLocal: now)
    }

    /// Starts over (the DJ restarted, or its clock jumped).
    func reset() { sync.reset() }
}
