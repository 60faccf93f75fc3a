import PartyRadioCore

/// Deterministic random numbers (the core's SplitMix64): one seed reproduces a whole run.
struct SimRandom {
    private var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }
    /// Uniform in [0, 1).
    mutating func unit() -> Double { generator.unit() }
    mutating func chance(_ p: Double) -> Bool { unit() < p }
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }
    mutating func double(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
