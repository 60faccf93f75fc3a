import CSodium
import PartyRadioCore

/// The keys of a private station, derived from its join code, and the libsodium AEAD that seals
/// its datagrams and TXT record (docs/PROTOCOL.md, "Private stations").
///
/// Derivation: `master = Argon2id(code, salt = BLAKE2b-128("partyradio private station v1"))`
/// (libsodium `crypto_pwhash`, 2 passes, 16 MiB), then one subkey per use,
/// `BLAKE2b-256(key: master, message: label)`. A code has 65 bits; Argon2id makes each guess of an
/// eavesdropper who tries codes against a captured datagram cost milliseconds and memory instead of
/// the nanoseconds of a plain hash. The salt is fixed because a guest must derive the keys before it
/// knows which station the code is for; 2^65 codes leave nothing worth precomputing.
public struct CodeSeal: StationSeal {
    /// Seals datagrams (XChaCha20-Poly1305, the marker as associated data).
    private let datagramKey: [UInt8]
    /// Seals the TXT record (same AEAD, its own key and associated data).
    private let txtKey: [UInt8]
    /// What a listener's player shows the DJ's media server (`X-Partyradio-Proof`), 64 hex digits.
    public let mediaProof: String
    /// What a browser shows the web page once it gave the code (`pr_code` cookie), 64 hex digits.
    public let webProof: String
    public let code: JoinCode

    static let passes: UInt64 = 2
    static let memoryBytes = 16 << 20
    static let txtAssociatedData = Array("partyradio txt v1".utf8)

    public init(code: JoinCode) {
        Sodium.ensureInitialised()
        self.code = code
        let master = Self.master(code)
        datagramKey = Self.subkey(master, "datagram")
        txtKey = Self.subkey(master, "txt")
        mediaProof = Hex.encode(Self.subkey(master, "media"))
        webProof = Hex.encode(Self.subkey(master, "web"))
    }

    static func master(_ code: JoinCode) -> [UInt8] {
        let label = Array("partyradio private station v1".utf8)
        var salt = [UInt8](repeating: 0, count: Int(crypto_pwhash_SALTBYTES))
        crypto_generichash(&salt, salt.count, label, UInt64(label.count), nil, 0)
        let length = UInt64(code.normalized.utf8.count)
        var key = [UInt8](repeating: 0, count: 32)
        let status = code.normalized.withCString { password in
            crypto_pwhash(
                &key, UInt64(key.count), password, length, salt, passes, memoryBytes, crypto_pwhash_ALG_ARGON2ID13)
        }
        precondition(status == 0, "Argon2id ran out of memory deriving the station key")
        return key
    }

    static func subkey(_ master: [UInt8], _ label: String) -> [UInt8] {
        let message = Array("partyradio \(label) v1".utf8)
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, out.count, message, UInt64(message.count), master, master.count)
        return out
    }

    public func seal(datagram: [UInt8]) -> [UInt8] {
        SealedDatagram.marker + Self.seal(datagram, key: datagramKey, associated: SealedDatagram.marker)
    }

    public func open(datagram: [UInt8]) -> [UInt8]? {
        guard SealedDatagram.isSealed(datagram), datagram.count >= SealedDatagram.overhead else { return nil }
        return Self.open(Array(datagram.dropFirst(2)), key: datagramKey, associated: SealedDatagram.marker)
    }

    /// The TXT strings joined by newlines (none of them holds one), sealed, in unpadded base64url:
    /// about 200 characters, under a TXT string's 255 bytes. The nonce is a keyed hash of the
    /// strings (a synthetic nonce), so the same record always seals to the same blob: the DJ can
    /// publish it again (after avahi-daemon comes back, say) without Avahi seeing a new record, and
    /// all an eavesdropper learns is that the record did not change, which it could see anyway.
    public func seal(txt: [String]) -> String {
        let plain = Array(txt.joined(separator: "\n").utf8)
        var nonce = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES))
        crypto_generichash(&nonce, nonce.count, plain, UInt64(plain.count), txtKey, txtKey.count)
        return Base64URL.encode(Self.seal(plain, key: txtKey, associated: Self.txtAssociatedData, nonce: nonce))
    }

    public func open(txt: String) -> [String]? {
        guard txt.utf8.count <= 400, let bytes = Base64URL.decode(txt),
            let plain = Self.open(bytes, key: txtKey, associated: Self.txtAssociatedData),
            let text = String(validating: plain, as: UTF8.self)
        else { return nil }
        return text.split(separator: "\n").map(String.init)
    }

    /// `nonce ‖ ciphertext ‖ tag` with a fresh random 24-byte nonce (XChaCha20's nonces are long
    /// enough to draw at random for every message).
    static func seal(_ plain: [UInt8], key: [UInt8], associated: [UInt8], nonce: [UInt8]? = nil) -> [UInt8] {
        let nonce = nonce ?? Sodium.randomBytes(Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES))
        var out = [UInt8](repeating: 0, count: plain.count + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES))
        var length: UInt64 = 0
        crypto_aead_xchacha20poly1305_ietf_encrypt(
            &out, &length, plain, UInt64(plain.count), associated, UInt64(associated.count), nil, nonce, key)
        return nonce + out.prefix(Int(length))
    }

    static func open(_ sealed: [UInt8], key: [UInt8], associated: [UInt8]) -> [UInt8]? {
        let nonceSize = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tagSize = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        guard sealed.count >= nonceSize + tagSize else { return nil }
        let nonce = Array(sealed.prefix(nonceSize))
        let cipher = Array(sealed.dropFirst(nonceSize))
        var out = [UInt8](repeating: 0, count: cipher.count - tagSize)
        var length: UInt64 = 0
        let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &length, nil, cipher, UInt64(cipher.count), associated, UInt64(associated.count), nonce, key)
        guard status == 0 else { return nil }
        return Array(out.prefix(Int(length)))
    }

    /// Compares two proofs in constant time (a wrong guess learns nothing from the timing).
    public static func sameProof(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        return sodium_memcmp(x, y, x.count) == 0
    }
}

extension JoinCode {
    /// A fresh code from libsodium's CSPRNG.
    public static func generate() -> JoinCode { JoinCode(entropy: Sodium.randomBytes(JoinCode.entropyBytes)) }
}
