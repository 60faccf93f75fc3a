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
    /// The DJ's key, when this node takes session MACs (``ChecksumSessionSigner``).
    public let sessionOwner: PublicKey?
    /// Guest keys for which no session key can be made (as libsodium refuses a key that is no point).
    public let unusableKeys: Set<PublicKey>

    public init(seal: (any StationSeal)? = nil, sessionOwner: PublicKey? = nil, unusableKeys: Set<PublicKey> = []) {
        self.seal = seal
        self.sessionOwner = sessionOwner
        self.unusableKeys = unusableKeys
    }

    public func verify(_ datagram: Datagram) -> Bool {
        datagram.header.authentication == .signature
            && ChecksumSigner.signature(datagram.signedBytes, by: datagram.header.sender) == datagram.signature
    }

    public func sessionKey(with peer: PublicKey) -> SessionKey? {
        guard let sessionOwner, !unusableKeys.contains(peer) else { return nil }
        return ChecksumSessionSigner.key(sessionOwner, peer)
    }

    public func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool {
        datagram.header.authentication == .session
            && ChecksumSessionSigner.mac(datagram.signedBytes, key: key) == datagram.signature
    }
}

/// A keyed checksum in place of the session MAC: the "session key" of two keys is a checksum of
/// both (anyone could make it: it stands in for the X25519 exchange only in shape), the MAC a
/// checksum of the key and the bytes.
public struct ChecksumSessionSigner: SessionSigner {
    public let publicKey: PublicKey
    let key: SessionKey

    public init(publicKey: PublicKey, stationKey: PublicKey) {
        self.publicKey = publicKey
        key = Self.key(publicKey, stationKey)
    }

    public func mac(_ bytes: [UInt8]) -> [UInt8] { Self.mac(bytes, key: key) }

    static func key(_ a: PublicKey, _ b: PublicKey) -> SessionKey {
        let (first, second) = a.bytes.lexicographicallyPrecedes(b.bytes) ? (a, b) : (b, a)
        var hash = FNV1a64()
        hash.combine(Array("session".utf8))
        hash.combine(first.bytes)
        hash.combine(second.bytes)
        let value = hash.value
        return SessionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: value >> (($0 % 8) * 8)) ^ UInt8($0) })!
    }

    static func mac(_ bytes: [UInt8], key: SessionKey) -> [UInt8] {
        var hash = FNV1a64()
        hash.combine(key.bytes)
        hash.combine(bytes)
        let value = hash.value
        return (0..<Datagram.sessionMACSize).map { UInt8(truncatingIfNeeded: value >> (($0 % 8) * 8)) ^ UInt8($0) }
    }
}
