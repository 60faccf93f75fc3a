/// A form body as browsers send it (`application/x-www-form-urlencoded`): `a=1&b=two+words`.
/// Pure, and strict: a malformed escape, bytes that are not UTF-8, or more than
/// ``maxFields`` fields make the whole form invalid (the web server answers 400).
public enum WebForm {
    public static let maxFields = 16

    /// The fields by name (the first of a repeated name wins); nil if the body is malformed.
    public static func parse(_ body: [UInt8]) -> [String: String]? {
        var fields: [String: String] = [:]
        var count = 0
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            count += 1
            guard count <= maxFields else { return nil }
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), !name.isEmpty else { return nil }
            let value = parts.count == 2 ? decode(parts[1]) : ""
            guard let value else { return nil }
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    /// Percent-decodes one name or value (`+` is a space, unless `plusIsSpace` is false as in a
    /// URL's path); nil if malformed or not UTF-8.
    static func decode(_ raw: ArraySlice<UInt8>, plusIsSpace: Bool = true) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard raw.distance(from: index, to: raw.endIndex) >= 3,
                    let high = hexValue(raw[index + 1]), let low = hexValue(raw[index + 2])
                else { return nil }
                bytes.append(high << 4 | low)
                index += 2
            default:
                bytes.append(byte)
            }
            index += 1
        }
        var text = ""
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Percent-encodes `text` for a form or a query (the inverse of ``parse(_:)``).
    public static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.encode(byte).uppercased()
            }
        }
        return out
    }
}
