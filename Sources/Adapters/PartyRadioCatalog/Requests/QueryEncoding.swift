import PartyRadioCore

/// Encodes query strings the way Apple's Search API documents: spaces become `+`, letters, digits
/// and `. - _ *` stay, every other byte of the UTF-8 form is percent-encoded. Pure.
public enum QueryEncoding {
    /// One query value or name, encoded.
    public static func encode(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                result += "+"
            default:
                result += "%" + Hex.encode(CollectionOfOne(byte), uppercase: true)
            }
        }
        return result
    }

    /// `name=value` pairs joined with `&`, in the order given (stable, so cache keys are too).
    public static func query(_ items: [(String, String)]) -> String {
        items.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    /// The inverse of ``encode(_:)`` (for the fixture server's echo and tests); nil on a bad escape.
    public static func decode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Hex.value(ofDigit:)),
                    let low = iterator.next().flatMap(Hex.value(ofDigit:))
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
