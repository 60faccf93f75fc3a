import CSodium
import Foundation
import PartyRadioCore

/// An Ed25519 key pair (libsodium): a station's or a listener's identity.
public struct Identity: Signer {
    public let publicKey: PublicKey
    private let secretKey: [UInt8]

    /// Makes a fresh key pair.
    public static func generate() -> Identity {
        Sodium.ensureInitialised()
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        crypto_sign_keypair(&pk, &sk)
        return Identity(publicKey: PublicKey(bytes: pk)!, secretKey: sk)
    }

    /// Rebuilds a key pair from its 32-byte seed (what the key file holds).
    public init?(seed: [UInt8]) {
        Sodium.ensureInitialised()
        guard seed.count == Int(crypto_sign_SEEDBYTES) else { return nil }
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        guard crypto_sign_seed_keypair(&pk, &sk, seed) == 0, let key = PublicKey(bytes: pk) else { return nil }
        self.init(publicKey: key, secretKey: sk)
    }

    private init(publicKey: PublicKey, secretKey: [UInt8]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The 32-byte seed, from which ``init(seed:)`` rebuilds the pair.
    var seed: [UInt8] {
        var seed = [UInt8](repeating: 0, count: Int(crypto_sign_SEEDBYTES))
        crypto_sign_ed25519_sk_to_seed(&seed, secretKey)
        return seed
    }

    public func sign(_ bytes: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        crypto_sign_detached(&signature, nil, bytes, UInt64(bytes.count), secretKey)
        return signature
    }

    /// The station ID this key stands for: the first 8 bytes of its BLAKE2b hash.
    public var stationID: StationID { Sodium.stationID(for: publicKey) }

    /// The key this identity shares with `peer` for session MACs (docs/PROTOCOL.md, "Session
    /// MAC"): both Ed25519 keys taken to X25519 (libsodium's conversions), their X25519 result,
    /// hashed with both public keys in byte order under a label of its own. The guest and the DJ
    /// each make the same key from their own secret and the other's public key; no one else can.
    /// Nil when `peer` is not a usable key (not a point, or one of small order).
    public func sessionKey(with peer: PublicKey) -> SessionKey? {
        var mine = [UInt8](repeating: 0, count: Int(crypto_scalarmult_curve25519_BYTES))
        var theirs = [UInt8](repeating: 0, count: Int(crypto_scalarmult_curve25519_BYTES))
        var shared = [UInt8](repeating: 0, count: Int(crypto_scalarmult_curve25519_BYTES))
        defer {
            sodium_memzero(&mine, mine.count)
            sodium_memzero(&shared, shared.count)
        }
        guard crypto_sign_ed25519_sk_to_curve25519(&mine, secretKey) == 0,
            crypto_sign_ed25519_pk_to_curve25519(&theirs, peer.bytes) == 0,
            crypto_scalarmult_curve25519(&shared, mine, theirs) == 0
        else { return nil }
        let (first, second) =
            publicKey.bytes.lexicographicallyPrecedes(peer.bytes)
            ? (publicKey.bytes, peer.bytes) : (peer.bytes, publicKey.bytes)
        let label = Array("partyradio session v1".utf8)
        var key = [UInt8](repeating: 0, count: SessionKey.byteCount)
        var input = shared + first + second
        crypto_generichash(&key, key.count, input, UInt64(input.count), label, label.count)
        sodium_memzero(&input, input.count)
        return SessionKey(bytes: key)
    }

    /// What ends this guest's votes to the station whose key is `stationKey` (nil: not a usable
    /// key; sign then).
    public func sessionSigner(for stationKey: PublicKey) -> SodiumSessionSigner? {
        sessionKey(with: stationKey).map { SodiumSessionSigner(publicKey: publicKey, key: $0) }
    }
}

/// Ends a guest's datagrams with the session MAC: BLAKE2b-256 keyed with the session key.
public struct SodiumSessionSigner: SessionSigner {
    public let publicKey: PublicKey
    let key: SessionKey

    public func mac(_ bytes: [UInt8]) -> [UInt8] { Sodium.sessionMAC(bytes, key: key) }
}

/// libsodium entry points that need no key of ours.
public enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ensureInitialised() {
        precondition(initialised, "libsodium failed to initialise")
    }

    /// Checks a detached Ed25519 signature.
    public static func verify(signature: [UInt8], of bytes: [UInt8], by key: PublicKey) -> Bool {
        ensureInitialised()
        guard signature.count == Int(crypto_sign_BYTES) else { return false }
        return crypto_sign_verify_detached(signature, bytes, UInt64(bytes.count), key.bytes) == 0
    }

    /// Checks a decoded datagram's signature against its sender key.
    public static func verify(_ datagram: Datagram) -> Bool {
        verify(signature: datagram.signature, of: datagram.signedBytes, by: datagram.header.sender)
    }

    /// BLAKE2b-256 of `bytes` keyed with a session key: the session MAC.
    public static func sessionMAC(_ bytes: [UInt8], key: SessionKey) -> [UInt8] {
        ensureInitialised()
        var mac = [UInt8](repeating: 0, count: Datagram.sessionMACSize)
        crypto_generichash(&mac, mac.count, bytes, UInt64(bytes.count), key.bytes, key.bytes.count)
        return mac
    }

    /// Checks a decoded datagram's session MAC under `key`, in constant time.
    public static func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool {
        guard datagram.header.authentication == .session, datagram.signature.count == Datagram.sessionMACSize
        else { return false }
        let expected = sessionMAC(datagram.signedBytes, key: key)
        return sodium_memcmp(expected, datagram.signature, expected.count) == 0
    }

    public static func stationID(for key: PublicKey) -> StationID {
        ensureInitialised()
        var hash = [UInt8](repeating: 0, count: 8)
        crypto_generichash(&hash, 8, key.bytes, UInt64(key.bytes.count), nil, 0)
        return StationID(rawValue: hash.reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// A web guest's key: BLAKE2b-256 of its browser's secret, keyed with a label of its own so the
    /// result is never mistaken for (or derivable from) anything else. The secret never leaves the
    /// DJ; the key's fingerprint is what others see.
    public static func webGuestKey(secret: [UInt8]) -> PublicKey {
        ensureInitialised()
        let label = Array("partyradio web guest v1".utf8)
        var hash = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&hash, 32, secret, UInt64(secret.count), label, label.count)
        return PublicKey(bytes: hash)!
    }

    /// SHA-256 of `bytes` (the page's Content-Security-Policy hashes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        ensureInitialised()
        var hash = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        crypto_hash_sha256(&hash, bytes, UInt64(bytes.count))
        return hash
    }

    /// Random bytes from libsodium's CSPRNG.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialised()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
