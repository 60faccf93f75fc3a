/// A 32-byte Ed25519 public key: a station's or a listener's identity on the wire.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Parses the unpadded base64url form published in the `pk` TXT key.
    public init?(base64url: String) {
        guard let decoded = Base64URL.decode(base64url) else { return nil }
        self.init(bytes: decoded)
    }

    public var base64url: String { Base64URL.encode(bytes) }

    /// A short fingerprint for people: the first 8 bytes in hex.
    public var fingerprint: String { Hex.encode(bytes.prefix(8)) }

    public var description: String { fingerprint }

    /// The first 8 bytes as a number (big-endian): what names a pinger in ``TimePongs``.
    public var prefix: UInt64 { bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }

    /// The 32 bytes in one go: the synthesized hash fed them to the hasher one at a time, and keys
    /// are what the DJ's books look up several times per datagram (a fifth of a save's time went
    /// there with 2,000 voters).
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (a: PublicKey, b: PublicKey) -> Bool { a.bytes == b.bytes }
}

/// Unpadded base64url (RFC 4648 §5), used in TXT records where space is scarce.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
            for position in 0...chunk.count { out.append(alphabet[Int((value >> (18 - 6 * position)) & 63)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        var value: UInt32 = 0
        var bits = 0
        var out: [UInt8] = []
        for char in text.utf8 {
            guard let digit = alphabet.firstIndex(of: char) else { return nil }
            value = (value << 6) | UInt32(digit)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: value >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero padding of fewer than 6 bits.
        guard bits < 6, value & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}

/// Stored (the DJ's saved state) as its base64url text.
extension PublicKey: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let key = PublicKey(base64url: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a public key: \(text)")
        }
        self = key
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64url)
    }
}
