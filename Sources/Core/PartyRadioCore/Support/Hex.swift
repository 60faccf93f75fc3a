/// Hexadecimal text, the one spelling of it in partyradio: station IDs, key fingerprints,
/// library track IDs, media tokens, percent-encoding and JSON escapes all use it.
///
/// Encoding writes lowercase digits unless asked for uppercase; decoding takes either case and
/// nothing else (no sign, no `0x`, no white space).
public enum Hex {
    /// Two digits per byte, high nibble first: `[0x0a, 0xff]` → `"0aff"`.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        var digits: [UInt8] = []
        digits.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            digits.append(digit(byte >> 4, uppercase: uppercase))
            digits.append(digit(byte & 0x0F, uppercase: uppercase))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// Every digit of `value`, zero-padded to `bitWidth / 4` (16 for a `UInt64`), most
    /// significant first.
    public static func encode<Value: FixedWidthInteger & UnsignedInteger>(
        _ value: Value, uppercase: Bool = false
    ) -> String {
        let count = Value.bitWidth / 4
        var digits = [UInt8](repeating: 0, count: count)
        var rest = value
        for position in (0..<count).reversed() {
            digits[position] = digit(UInt8(truncatingIfNeeded: rest) & 0x0F, uppercase: uppercase)
            rest >>= 4
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The bytes of an even number of digits; nil for an odd count or a non-digit.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(ofDigit: utf8[index]), let low = value(ofDigit: utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// A value from exactly `bitWidth / 4` digits (16 for a `UInt64`), the inverse of encoding
    /// an integer; nil for any other length or a non-digit.
    public static func decode<Value: FixedWidthInteger & UnsignedInteger>(
        _ text: some StringProtocol, as _: Value.Type
    ) -> Value? {
        guard text.utf8.count == Value.bitWidth / 4 else { return nil }
        var result: Value = 0
        for byte in text.utf8 {
            guard let nibble = value(ofDigit: byte) else { return nil }
            result = result << 4 | Value(nibble)
        }
        return result
    }

    /// The value (0–15) of one ASCII hex digit in either case; nil if `ascii` is not one.
    public static func value(ofDigit ascii: UInt8) -> UInt8? {
        switch ascii {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): ascii - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): ascii - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): ascii - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The ASCII digit for the low four bits of `nibble`.
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        let value = nibble & 0x0F
        if value < 10 { return UInt8(ascii: "0") + value }
        return (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + value - 10
    }
}
