import Testing

@testable import PartyRadioCore

/// Join codes: what people type is forgiven, and every code carries its 65 bits.
@Suite struct JoinCodeTests {
    @Test func codesCarryAtLeast64Bits() {
        #expect(JoinCode.entropyBits >= 64)
        #expect(JoinCode.length == 13 && JoinCode.alphabet.count == 32)
        let code = JoinCode(entropy: [UInt8](repeating: 0xA5, count: JoinCode.entropyBytes))
        #expect(code.normalized.count == 13)
        #expect(code.grouped.count == 15 && code.grouped.split(separator: "-").map(\.count) == [4, 4, 5])
    }

    @Test func everyOneOf65BitsChangesTheCode() {
        let zero = [UInt8](repeating: 0, count: JoinCode.entropyBytes)
        let base = JoinCode(entropy: zero)
        #expect(base.normalized == String(repeating: "0", count: 13))
        var seen: Set<String> = [base.normalized]
        for bit in 0..<JoinCode.entropyBits {
            var bytes = zero
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
            seen.insert(JoinCode(entropy: bytes).normalized)
        }
        #expect(seen.count == 66, "each of the 65 bits gives its own code")
        // Bits past the 65th are not used.
        var extra = zero
        extra[8] = 0x3F
        #expect(JoinCode(entropy: extra) == base)
    }

    @Test func typingIsForgiven() throws {
        let code = JoinCode(entropy: [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x80])
        #expect(try JoinCode(parsing: code.grouped) == code)
        #expect(try JoinCode(parsing: code.normalized.lowercased()) == code)
        #expect(try JoinCode(parsing: " " + code.grouped.lowercased().replacingOccurrences(of: "-", with: " ")) == code)
        // O, I and L read as the digits they look like.
        #expect(try JoinCode(parsing: "OIL0-1234-56789").normalized == "0110123456789")
    }

    @Test func badCodesAreRefused() {
        #expect(throws: JoinCode.Problem.wrongLength(12)) { try JoinCode(parsing: "K7QX-3MZD-9TRF") }
        #expect(throws: JoinCode.Problem.wrongLength(14)) { try JoinCode(parsing: "K7QX-3MZD-9TRFAA") }
        #expect(throws: JoinCode.Problem.badCharacter("U")) { try JoinCode(parsing: "K7QX-3MZD-9TRFU") }
        #expect(throws: JoinCode.Problem.badCharacter("!")) { try JoinCode(parsing: "K7QX-3MZD-9TRF!") }
        #expect(throws: JoinCode.Problem.wrongLength(0)) { try JoinCode(parsing: "") }
    }
}
