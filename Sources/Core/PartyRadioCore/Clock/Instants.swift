/// An instant on this node's own clock, in nanoseconds since the Unix epoch.
///
/// Local time and DJ time are different types so that the compiler refuses to mix them: a
/// listener turns one into the other only through its clock estimate (``ClockEstimate``), and
/// the DJ, whose own clock *is* the DJ clock, through ``DJTime/init(onTheDJ:)``. Durations stay
/// plain nanosecond counts (`Int64`, named `…Ns`).
public struct LocalTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var ns: Int64

    public init(ns: Int64) { self.ns = ns }

    public static func < (a: Self, b: Self) -> Bool { a.ns < b.ns }
    public static func + (a: Self, duration: Int64) -> Self { Self(ns: a.ns &+ duration) }
    public static func - (a: Self, duration: Int64) -> Self { Self(ns: a.ns &- duration) }
    /// The nanoseconds from `b` to `a`.
    public static func - (a: Self, b: Self) -> Int64 { a.ns &- b.ns }
    public static func += (a: inout Self, duration: Int64) { a = a + duration }

    public var description: String { "local \(ns)" }
}

/// An instant on the station's (the DJ's) clock, in nanoseconds since the Unix epoch.
/// Anchors, snapshots' send times and the DJ's side of a time exchange are DJ time.
public struct DJTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var ns: Int64

    public init(ns: Int64) { self.ns = ns }

    /// The DJ-clock reading at local instant `local` *on the DJ itself*, where the two clocks
    /// are one. Nowhere else is this conversion right.
    public init(onTheDJ local: LocalTime) { ns = local.ns }

    public static func < (a: Self, b: Self) -> Bool { a.ns < b.ns }
    public static func + (a: Self, duration: Int64) -> Self { Self(ns: a.ns &+ duration) }
    public static func - (a: Self, duration: Int64) -> Self { Self(ns: a.ns &- duration) }
    /// The nanoseconds from `b` to `a`.
    public static func - (a: Self, b: Self) -> Int64 { a.ns &- b.ns }

    public var description: String { "dj \(ns)" }
}

/// A source of this node's local time. Core logic takes time as a parameter; the edges read it
/// from a clock like this one, which tests and the simulator replace.
public protocol LocalClock: Sendable {
    func now() -> LocalTime
}
