import Testing

@testable import PartyRadioCore

@Suite struct HexTests {
    @Test func bytesEncodeTwoDigitsEach() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x0a, 0xff, 0x7b]) == "000aff7b")
        #expect(Hex.encode([0xab, 0xcd], uppercase: true) == "ABCD")
        #expect(Hex.encode([UInt8](0...255)).utf8.count == 512)
    }

    @Test func integersArePaddedToTheirWidth() {
        #expect(Hex.encode(UInt64(0)) == "0000000000000000")
        #expect(Hex.encode(UInt64(0x0123_4567_89AB_CDEF)) == "0123456789abcdef")
        #expect(Hex.encode(UInt64.max, uppercase: true) == "FFFFFFFFFFFFFFFF")
        #expect(Hex.encode(UInt16(0x1f)) == "001f")
        #expect(Hex.encode(UInt8(0x0a)) == "0a")
    }

    @Test func decodingTakesEitherCaseAndNothingElse() {
        #expect(Hex.decode("000aFF7b") == [0x00, 0x0a, 0xff, 0x7b])
        #expect(Hex.decode("") == [])
        for bad in ["0", "abc", "0g", " 00", "0x00", "+1", "é0"] { #expect(Hex.decode(bad) == nil, "\(bad)") }

        #expect(Hex.decode("0123456789ABCDEF", as: UInt64.self) == 0x0123_4567_89AB_CDEF)
        #expect(Hex.decode("001f", as: UInt16.self) == 0x1f)
        // UInt64(_:radix:) would take a sign or a short string; a hex field must be exactly its width.
        let badIDs = [
            "+123456789abcdef", "-123456789abcdef", "123456789abcdef", "0123456789abcdef0", "0123456789abcdeg",
        ]
        for bad in badIDs {
            #expect(Hex.decode(bad, as: UInt64.self) == nil, "\(bad)")
        }
    }

    @Test func everyValueRoundTrips() {
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<1000 {
            let value = UInt64.random(in: .min ... .max, using: &generator)
            #expect(Hex.decode(Hex.encode(value), as: UInt64.self) == value)
            let bytes = withUnsafeBytes(of: value.bigEndian) { Array($0) }
            #expect(Hex.encode(bytes) == Hex.encode(value))
            #expect(Hex.decode(Hex.encode(bytes, uppercase: true)) == bytes)
        }
    }

    @Test func digitsAndValues() {
        let digits = (0..<16).map { Hex.digit(UInt8($0)) }
        #expect(String(decoding: digits, as: UTF8.self) == "0123456789abcdef")
        #expect(digits.map(Hex.value(ofDigit:)) == (0..<16).map { UInt8($0) })
        #expect(Hex.value(ofDigit: UInt8(ascii: "F")) == 15)
        #expect(Hex.value(ofDigit: UInt8(ascii: "g")) == nil)
        #expect(Hex.value(ofDigit: UInt8(ascii: "/")) == nil)
        #expect(Hex.value(ofDigit: UInt8(ascii: ":")) == nil)
    }

    @Test func stationIDsUseIt() {
        #expect(StationID(rawValue: 0xAB).hex == "00000000000000ab")
        #expect(StationID(hex: "00000000000000AB")?.rawValue == 0xAB)
        #expect(StationID(hex: "+0000000000000ab") == nil)
        #expect(PublicKey(bytes: [UInt8](repeating: 0xA5, count: 32))?.fingerprint == "a5a5a5a5a5a5a5a5")
    }
}
