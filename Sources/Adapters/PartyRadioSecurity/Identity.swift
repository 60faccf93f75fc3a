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
