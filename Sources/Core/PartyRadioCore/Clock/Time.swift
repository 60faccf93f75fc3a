/// Nanoseconds in a millisecond and a second, for readable arithmetic.
public enum Nanos {
    public static let perMillisecond: Int64 = 1_000_000
    public static let perSecond: Int64 = 1_000_000_000

    public static func ms(_ value: Int64) -> Int64 { value * perMillisecond }
    public static func seconds(_ value: Double) -> Int64 { Int64(value * Double(perSecond)) }
}

/// A source of the current time in nanoseconds since the Unix epoch. Core logic takes time as
/// a parameter; the edges read it from a clock like this one, which tests can replace.
public protocol NanoClock: Sendable {
    func now() -> Int64
}
