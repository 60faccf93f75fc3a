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

/// The simulator's stand-in for Ed25519: a keyed checksum the verifier can recompute. It proves
/// nothing cryptographic; it exercises the same sign, encode, decode and verify path as the real
/// runtime, cheaply enough for hundreds of seeded runs. Real signatures are tested elsewhere.
struct SimSigner: Signer {
    let publicKey: PublicKey

    func sign(_ bytes: [UInt8]) -> [UInt8] { Self.signature(bytes, by: publicKey) }

    static func signature(_ bytes: [UInt8], by key: PublicKey) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.bytes + bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return (0..<64).map { UInt8(truncatingIfNeeded: hash >> (($0 % 8) * 8)) ^ UInt8($0) }
    }
}

struct SimVerifier: DatagramVerifier {
    func verify(_ datagram: Datagram) -> Bool {
        SimSigner.signature(datagram.signedBytes, by: datagram.header.sender) == datagram.signature
    }
}
