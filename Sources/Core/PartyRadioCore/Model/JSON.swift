/// A JSON value for `--json`, `--json-events` and `--trace` output and for the catalog's JWT
/// header and claims; keys keep their insertion order so lines (and signed bytes) read the same
/// every time. Pure: rendering only, no parsing.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.rendered == rhs.rendered }

    public var rendered: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .integer(let value): String(value)
        case .double(let value): value.isFinite ? String(value) : "null"
        case .string(let value): Self.quote(value)
        case .array(let values): "[" + values.map(\.rendered).joined(separator: ",") + "]"
        case .object(let pairs): "{" + pairs.map { Self.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        }
    }

    public static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + Hex.encode(UInt16(scalar.value))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension JSON {
    /// The same value with every string as ``ShownText`` shows it: for what a page or a JSON
    /// reader shows from guests, files and the catalog (never for signed bytes).
    public var shown: JSON {
        switch self {
        case .null, .bool, .integer, .double: self
        case .string(let value): .string(ShownText.cleaned(value))
        case .array(let values): .array(values.map(\.shown))
        case .object(let pairs): .object(pairs.map { ($0.0, $0.1.shown) })
        }
    }

    public static func int<T: BinaryInteger>(_ value: T) -> JSON { .integer(Int64(value)) }
}
