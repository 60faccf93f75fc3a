/// The 64-bit FNV-1a hash: the same value on every run and machine, where Swift's `Hasher` is
/// seeded per process. Cheap and not cryptographic: for IDs and checksums that must never change
/// (library track IDs, the catalog cache's body checksums), never for anything an attacker picks.
public struct FNV1a64: Hashable, Sendable {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

    @usableFromInline var state: UInt64

    /// The hash of nothing yet (the offset basis).
    public init() { state = Self.offsetBasis }

    /// The hash of every byte combined so far.
    public var value: UInt64 { state }

    /// Feeds `bytes` in order; hashing in pieces gives the same value as hashing them joined.
    @inlinable
    public mutating func combine(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            state ^= UInt64(byte)
            state &*= Self.prime
        }
    }

    /// The hash of `bytes`.
    @inlinable
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hasher = FNV1a64()
        hasher.combine(bytes)
        return hasher.value
    }
}
