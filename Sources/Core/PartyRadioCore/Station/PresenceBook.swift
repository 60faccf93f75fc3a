/// How long each guest machine (``MachineID/key``) has been at the station: heard as a listener (a
/// node's hello or heartbeat, a page that plays) or as a page open on the station (its event
/// stream), without a silence longer than ``gapNs``. A vote weighs toward crowd skip only once its
/// machine has been present for the DJ's `--vote-weight-after` (docs/SECURITY.md, "Votes weigh
/// after listening"): a fresh machine, or a fresh link-layer address, cannot skip a track on arrival.
///
/// Bounded: at most ``capacity`` machines. When full, a newcomer takes the place of the machine that
/// arrived last, so machines present for a while are never pushed out by a crowd of new ones.
public struct PresenceBook: Sendable, Equatable {
    public static let capacity = 4096

    public struct Entry: Sendable, Equatable {
        /// When this stretch of presence began.
        public var since: DJTime
        public var lastSeen: DJTime
    }

    /// A machine silent for longer than this starts over (the listener count's own timeout: a
    /// listener's heartbeat comes every second, a page's every second or two).
    public let gapNs: Int64
    /// How often a page open on the station (its event stream) tells the DJ so: well inside
    /// ``gapNs``, so that an open page stays present through a late wakeup.
    public static let pageIntervalNs = Nanos.seconds(1.5)
    public private(set) var entries: [String: Entry] = [:]

    public init(gapNs: Int64 = Nanos.seconds(3.5)) { self.gapNs = gapNs }

    /// The machine was heard at `now` as a listener or an open page.
    public mutating func heard(_ machine: String, now: DJTime) {
        if var entry = entries[machine], now - entry.lastSeen <= gapNs {
            entry.lastSeen = max(entry.lastSeen, now)
            entries[machine] = entry
            return
        }
        if entries[machine] == nil, entries.count >= Self.capacity,
            let newest = entries.max(by: { $0.value.since < $1.value.since })
        {
            entries.removeValue(forKey: newest.key)
        }
        entries[machine] = Entry(since: now, lastSeen: now)
    }

    /// How long `machine` has been present at `now`; nil when it is not (never heard, or silent for
    /// longer than ``gapNs``).
    public func presentNs(_ machine: String, now: DJTime) -> Int64? {
        guard let entry = entries[machine], now - entry.lastSeen <= gapNs else { return nil }
        return max(0, now - entry.since)
    }

    /// Forgets machines silent for longer than ``gapNs``.
    public mutating func expire(now: DJTime) {
        entries = entries.filter { now - $0.value.lastSeen <= gapNs }
    }
}
