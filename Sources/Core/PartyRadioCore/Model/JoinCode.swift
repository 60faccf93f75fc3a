/// The join code of a private station: 13 Crockford base32 characters (65 bits), shown grouped
/// as `K7QX-3MZD-9TRFA`. Whoever holds it can open the station's sealed advert and datagrams
/// (docs/PROTOCOL.md, "Private stations"); the keys are derived from ``normalized``.
///
/// Input is forgiving because people type it from a screen: case is ignored, hyphens and spaces
/// are dropped, and the letters Crockford's alphabet leaves out for looking like digits (`O`,
/// `I`, `L`) are read as the digits they look like.
public struct JoinCode: Hashable, Sendable, CustomStringConvertible {
    /// Characters in a code: 13 × 5 bits = 65 bits, the "at least 64".
    public static let length = 13
    public static let entropyBits = length * 5
    /// Random bytes ``init(entropy:)`` needs (65 bits are taken from 72).
    public static let entropyBytes = 9
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The 13 characters, upper case, no hyphens: what keys are derived from.
    public let normalized: String

    public enum Problem: Error, Equatable, Sendable {
        case wrongLength(Int)
        case badCharacter(Character)
    }

    /// Parses what a person typed (see the type's note on forgiveness).
    public init(parsing text: String) throws(Problem) {
        var out = ""
        for character in text.uppercased() where character != "-" && character != " " {
            let mapped: Character =
                switch character {
                case "O": "0"
                case "I", "L": "1"
                default: character
                }
            guard Self.alphabet.contains(mapped) else { throw .badCharacter(character) }
            out.append(mapped)
        }
        guard out.count == Self.length else { throw .wrongLength(out.count) }
        normalized = out
    }

    /// A code from random bytes (at least ``entropyBytes``; the adapter draws them from a CSPRNG).
    public init(entropy: [UInt8]) {
        precondition(entropy.count >= Self.entropyBytes, "a join code needs \(Self.entropyBytes) random bytes")
        var bits = entropy.prefix(Self.entropyBytes).reduce(into: [Bool]()) { bits, byte in
            for shift in stride(from: 7, through: 0, by: -1) { bits.append(byte >> UInt8(shift) & 1 == 1) }
        }
        bits = Array(bits.prefix(Self.entropyBits))
        var out = ""
        for start in stride(from: 0, to: bits.count, by: 5) {
            let value = bits[start..<start + 5].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
            out.append(Self.alphabet[value])
        }
        normalized = out
    }

    /// Grouped for reading aloud and typing: `K7QX-3MZD-9TRFA`.
    public var grouped: String {
        let characters = Array(normalized)
        return [String(characters[0..<4]), String(characters[4..<8]), String(characters[8...])]
            .joined(separator: "-")
    }

    public var description: String { grouped }
}
