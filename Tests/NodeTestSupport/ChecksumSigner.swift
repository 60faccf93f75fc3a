import PartyRadioCore

/// A keyed checksum in place of Ed25519, for the node unit tests and the simulated LAN: it
/// proves nothing cryptographic, but a datagram verifies only under the key it claims, and any
/// changed byte breaks it, through the same sign, encode, decode and verify path as the real
/// runtime, cheaply enough for hundreds of seeded runs. Real signatures are tested elsewhere.
public struct ChecksumSigner: Signer {
    public let publicKey: PublicKey

    public init(publicKey: PublicKey) { self.publicKey = publicKey }

    public func sign(_ bytes: [UInt8]) -> [UInt8] { Self.signature(bytes, by: publicKey) }

    public static func signature(_ bytes: [UInt8], by key: PublicKey) -> [UInt8] {
        var hash = FNV1a64()
        hash.combine(key.bytes)
        hash.combine(bytes)
        let value = hash.value
        return (0..<64).map { UInt8(truncatingIfNeeded: value >> (($0 % 8) * 8)) ^ UInt8($0) }
    }
}

/// Checks a ``ChecksumSigner`` signature against the key the header names.
public struct ChecksumVerifier: DatagramVerifier {
    /// A private station's stand-in seal, when the node holds its code.
    public let seal: (any StationSeal)?
    public init(seal: (any StationSeal)? = nil) { self.seal = seal }

    public func verify(_ datagram: Datagram) -> Bool {
        ChecksumSigner.signature(datagram.signedBytes, by: datagram.header.sender) == datagram.signature
    }
}
