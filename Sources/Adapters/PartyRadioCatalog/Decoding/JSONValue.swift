import PartyRadioCore

/// A parsed JSON document, kept loose on purpose: Apple's responses mix numbers and strings for the
/// same field, leave fields out and wrap single items differently, so decoders ask for what they
/// need and tolerate the rest.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number kept as its lexeme, so 19-digit IDs survive exactly.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member named `key` of an object; nil for anything else.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A string, or a number written as a string: how Apple sends IDs depends on the endpoint.
    public var identifier: String? {
        switch self {
        case .string(let text):
            let trimmed = text.trimmingWhitespace()
            return trimmed.isEmpty ? nil : trimmed
        case .number(let lexeme):
            if lexeme.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) { return lexeme }
            guard let value = Double(lexeme), value.isFinite, value == value.rounded(), abs(value) < 1e18 else {
                return lexeme
            }
            return String(Int64(value))
        default: return nil
        }
    }

    /// A whole number from a number or a numeric string (`"215000"`), rounded; nil otherwise.
    public var integer: Int? {
        switch self {
        case .number(let lexeme): return Self.integer(from: lexeme)
        case .string(let text): return Self.integer(from: text.trimmingWhitespace())
        default: return nil
        }
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The items of an array, or a lone object as one item: Apple's RSS feeds drop the array when
    /// there is a single entry.
    public var list: [JSONValue] {
        switch self {
        case .array(let items): return items
        case .object: return [self]
        default: return []
        }
    }

    private static func integer(from text: String) -> Int? {
        if let exact = Int(text) { return exact }
        guard let value = Double(text), value.isFinite, abs(value) < 9e15 else { return nil }
        return Int(value.rounded())
    }
}

/// Why a document is not JSON, with the byte where parsing stopped.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var offset: Int
    /// True when the input ended early: the body was most likely cut off in transit.
    public var isTruncation: Bool
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A small, strict JSON parser (RFC 8259) that never traps: every malformed, truncated or too
/// deeply nested input becomes a ``JSONParseError``. Pure; fuzzed in the tests.
public struct JSONParser {
    public static let maximumDepth = 200

    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let buffer = Array(bytes)
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == buffer.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private let bytes: [UInt8]
    private var position = 0

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ reason: String) -> JSONParseError {
        JSONParseError(reason: reason, offset: position, isTruncation: false)
    }

    private func endOfInput() -> JSONParseError {
        JSONParseError(reason: "unexpected end of input", offset: position, isTruncation: true)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard position < bytes.count else { throw endOfInput() }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character '\(Self.printable(bytes[position]))'")
        }
    }

    private static func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + Hex.encode(byte)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let utf8 = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in utf8 {
            guard position < bytes.count else { throw endOfInput() }
            guard bytes[position] == byte else { throw error("invalid literal") }
            position += 1
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        guard position < bytes.count else { throw endOfInput() }
        if bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw endOfInput() }
            guard bytes[position] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count else { throw endOfInput() }
            guard bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
            position += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            guard position < bytes.count else { throw endOfInput() }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        guard position < bytes.count else { throw endOfInput() }
        if bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard position < bytes.count else { throw endOfInput() }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(items)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = position
        func digits(_ parser: inout JSONParser) -> Int {
            var count = 0
            while parser.position < parser.bytes.count, (0x30...0x39).contains(parser.bytes[parser.position]) {
                parser.position += 1
                count += 1
            }
            return count
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw endOfInput() }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits(&self) == 0 {
            throw error("expected a digit")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count else { throw endOfInput() }
            guard digits(&self) > 0 else { throw error("expected a digit after '.'") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count else { throw endOfInput() }
            guard digits(&self) > 0 else { throw error("expected a digit in the exponent") }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        var utf8: [UInt8] = []
        var runStart = position
        while true {
            guard position < bytes.count else { throw endOfInput() }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                defer { position += 1 }
                if utf8.isEmpty {  // no escapes: one copy straight from the input
                    return String(decoding: bytes[runStart..<position], as: UTF8.self)
                }
                utf8.append(contentsOf: bytes[runStart..<position])
                return String(decoding: utf8, as: UTF8.self)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            utf8.append(contentsOf: bytes[runStart..<position])
            position += 1
            guard position < bytes.count else { throw endOfInput() }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by `\uDC00`-`\uDFFF`; anything else becomes U+FFFD.
                    if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    {
                        let save = position
                        position += 2
                        let low = try parseHex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            position = save
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if (0xDC00..<0xE000).contains(scalar) {
                    scalar = 0xFFFD
                }
                utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: throw error("invalid escape '\\\(Self.printable(escape))'")
            }
            runStart = position
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw endOfInput() }
            guard let digit = Hex.value(ofDigit: bytes[position]) else { throw error("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
