@testable import PartyRadioCore

// The core's API takes typed instants (LocalTime, DJTime) so that production code cannot mix
// the two clocks. These tests predate that and reason in raw nanoseconds; the shims below give
// them the raw forms back, in the test target only.

extension TimeSample {
    init(t1: Int64, t2: Int64, t3: Int64, t4: Int64) {
        self.init(t1: LocalTime(ns: t1), t2: DJTime(ns: t2), t3: DJTime(ns: t3), t4: LocalTime(ns: t4))
    }
}

extension ClockSync {
    func offset(atLocal local: Int64) -> Int64? { offset(at: LocalTime(ns: local)) }
    func djTime(local: Int64) -> Int64? { djTime(at: LocalTime(ns: local))?.ns }
    func suggestedPingIntervalNs(atLocal now: Int64, pingsSent: Int = .max) -> Int64 {
        suggestedPingIntervalNs(at: LocalTime(ns: now), pingsSent: pingsSent)
    }
}

extension ClockEstimate {
    func djTime(local: Int64) -> Int64 { djTime(at: LocalTime(ns: local)).ns }
    func localTime(dj: Int64) -> Int64 { localTime(at: DJTime(ns: dj)).ns }
}

extension PlaybackAnchor {
    init(djTimeNs: Int64, positionNs: Int64, rateMicros: UInt32) {
        self.init(djTime: DJTime(ns: djTimeNs), positionNs: positionNs, rateMicros: rateMicros)
    }
    var djTimeNs: Int64 { djTime.ns }
    static func playing(at position: Int64, djTime: Int64) -> Self {
        .playing(at: position, djTime: DJTime(ns: djTime))
    }
    static func paused(at position: Int64, djTime: Int64) -> Self { .paused(at: position, djTime: DJTime(ns: djTime)) }
    func position(atDJTime dj: Int64, durationNs: Int64? = nil) -> Int64 {
        position(at: DJTime(ns: dj), durationNs: durationNs)
    }
    func djTime(whenPositionReaches target: Int64) -> Int64? {
        let instant: DJTime? = djTime(whenPositionReaches: target)
        return instant?.ns
    }
}

extension StationEngine {
    init(
        name: String, queue: [Track], now: Int64, startIndex: Int = 0, startPositionNs: Int64 = 0, paused: Bool = false
    ) {
        self.init(
            name: name, queue: queue, now: DJTime(ns: now), startIndex: startIndex, startPositionNs: startPositionNs,
            paused: paused)
    }
    func positionNs(at now: Int64) -> Int64 { positionNs(at: DJTime(ns: now)) }
    mutating func next(now: Int64) -> Bool { next(now: DJTime(ns: now)) }
    mutating func previous(now: Int64) -> Bool { previous(now: DJTime(ns: now)) }
    mutating func pause(now: Int64) -> Bool { pause(now: DJTime(ns: now)) }
    mutating func resume(now: Int64) -> Bool { resume(now: DJTime(ns: now)) }
    mutating func seek(toNs position: Int64, now: Int64) -> Bool { seek(toNs: position, now: DJTime(ns: now)) }
    mutating func enqueue(_ tracks: [Track], now: Int64) -> Bool { enqueue(tracks, now: DJTime(ns: now)) }
    mutating func tick(now: Int64) -> Bool { tick(now: DJTime(ns: now)) }
    mutating func hello(from key: PublicKey, name: String, now: Int64) -> Bool {
        hello(from: key, name: name, now: DJTime(ns: now))
    }
    mutating func heartbeat(from key: PublicKey, now: Int64) -> Bool { heartbeat(from: key, now: DJTime(ns: now)) }
    mutating func expireListeners(now: Int64) -> Bool { expireListeners(now: DJTime(ns: now)) }
    func snapshot(now: Int64) -> StateSnapshot { snapshot(now: DJTime(ns: now)) }
}

extension ListenerRoster {
    @discardableResult
    mutating func join(_ key: PublicKey, name: String, now: Int64) -> Bool {
        join(key, name: name, now: DJTime(ns: now))
    }
    @discardableResult
    mutating func heartbeat(_ key: PublicKey, now: Int64) -> Bool { heartbeat(key, now: DJTime(ns: now)) }
    mutating func expire(now: Int64) -> Int { expire(now: DJTime(ns: now)) }
}

extension StationDirectory {
    mutating func heard(_ id: StationID, snapshot: StateSnapshot, now: Int64) -> Change? {
        heard(id, snapshot: snapshot, now: LocalTime(ns: now))
    }
    mutating func expire(now: Int64) -> [Change] { expire(now: LocalTime(ns: now)) }
}
