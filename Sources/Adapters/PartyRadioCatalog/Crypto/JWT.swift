import PartyRadioCore

/// Assembles JSON Web Tokens apart from the signing itself, which ``ES256Key`` does. Pure.
public enum JWT {
    /// base64url without padding (RFC 7515 §2).
    public static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".unicodeScalars)
        var output = String.UnicodeScalarView()
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int(buffer >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(6 - bits) & 0x3F)]) }
        return String(output)
    }

    /// Decodes base64url with or without padding; nil on any other character.
    public static func base64URLDecode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for scalar in text.unicodeScalars {
            let value: UInt32
            switch scalar {
            case "A"..."Z": value = scalar.value - 65
            case "a"..."z": value = scalar.value - 97 + 26
            case "0"..."9": value = scalar.value - 48 + 52
            case "-": value = 62
            case "_": value = 63
            case "=": continue
            default: return nil
            }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        return output
    }

    /// `base64url(header) + "." + base64url(claims)`: the bytes the signature covers.
    public static func signingInput(headerJSON: String, claimsJSON: String) -> String {
        base64URL(Array(headerJSON.utf8)) + "." + base64URL(Array(claimsJSON.utf8))
    }

    /// The compact token: signing input, a dot, the base64url signature.
    public static func compact(signingInput: String, signature: [UInt8]) -> String {
        signingInput + "." + base64URL(signature)
    }

    /// The raw `r || s` form JWS wants (RFC 7518 §3.4) from a DER `ECDSA-Sig-Value`, each half
    /// left-padded to `width` bytes; nil when the DER is not that structure.
    public static func rawSignature(fromDER der: [UInt8], width: Int = 32) -> [UInt8]? {
        var reader = DERReader(bytes: der)
        guard let sequence = reader.read(tag: 0x30), reader.isAtEnd else { return nil }
        var inner = DERReader(bytes: sequence)
        guard let r = inner.read(tag: 0x02), let s = inner.read(tag: 0x02), inner.isAtEnd else { return nil }
        guard let rawR = unsignedFixed(r, width: width), let rawS = unsignedFixed(s, width: width) else { return nil }
        return rawR + rawS
    }

    /// The DER `ECDSA-Sig-Value` for a raw `r || s` signature (what libcrypto's verify takes).
    public static func derSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count % 2 == 0, !raw.isEmpty else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02] + length(value.count) + value
        }
        func length(_ count: Int) -> [UInt8] {
            count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)]
        }
        let half = raw.count / 2
        let body = integer(raw[..<half]) + integer(raw[half...])
        guard body.count < 256 else { return nil }
        return [0x30] + length(body.count) + body
    }

    private static func unsignedFixed(_ integer: [UInt8], width: Int) -> [UInt8]? {
        let trimmed = Array(integer.drop(while: { $0 == 0 }))
        guard trimmed.count <= width else { return nil }
        return Array(repeating: 0, count: width - trimmed.count) + trimmed
    }
}

/// Reads definite-length DER TLVs; enough for an ECDSA signature.
struct DERReader {
    var bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    mutating func read(tag: UInt8) -> [UInt8]? {
        guard position + 2 <= bytes.count, bytes[position] == tag else { return nil }
        var length = Int(bytes[position + 1])
        position += 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count >= 1, count <= 2, position + count <= bytes.count else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[position])
                position += 1
            }
        }
        guard length <= bytes.count - position else { return nil }
        defer { position += length }
        return Array(bytes[position..<position + length])
    }
}

/// The Apple Music developer token: an ES256 JWT with `kid` in the header and `iss` (team ID),
/// `iat` and `exp` in the claims. Apple refuses tokens that live longer than about six months.
public struct DeveloperTokenClaims: Sendable, Equatable {
    /// Apple's limit is 15777000 seconds (six months); whole days keep under it.
    public static let maximumLifetimeDays = 180

    public var teamID: String
    public var keyID: String
    /// Seconds since 1970.
    public var issuedAt: Int
    public var lifetimeSeconds: Int

    public init(teamID: String, keyID: String, issuedAt: Int, lifetimeSeconds: Int) {
        self.teamID = teamID
        self.keyID = keyID
        self.issuedAt = issuedAt
        self.lifetimeSeconds = lifetimeSeconds
    }

    public var expiresAt: Int { issuedAt + lifetimeSeconds }

    public var headerJSON: String {
        JSON.object([("alg", .string("ES256")), ("kid", .string(keyID)), ("typ", .string("JWT"))]).rendered
    }

    public var claimsJSON: String {
        JSON.object([("iss", .string(teamID)), ("iat", .int(issuedAt)), ("exp", .int(expiresAt))]).rendered
    }

    public var signingInput: String { JWT.signingInput(headerJSON: headerJSON, claimsJSON: claimsJSON) }

    /// Whether `text` looks like Apple's 10-character team or key identifier.
    public static func isAppleIdentifier(_ text: String) -> Bool {
        text.count == 10 && text.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }
}
