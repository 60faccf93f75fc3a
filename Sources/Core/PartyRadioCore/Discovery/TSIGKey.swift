/// A TSIG key as BIND writes it (`tsig-keygen -a hmac-sha256 NAME`), for signing the RFC 2136
/// updates that publish a station in a unicast DNS-SD domain:
///
/// ```
/// key "partyradio" {
///         algorithm hmac-sha256;
///         secret "base64...";
/// };
/// ```
///
/// The file is the user's, but it may be anything: parsing is total (a clear error, never a trap).
public struct TSIGKey: Hashable, Sendable {
    /// The key's name, as the server's `allow-update { key "NAME"; }` names it.
    public var name: String
    /// `hmac-sha256` (the default of `tsig-keygen`), `hmac-sha512`, `hmac-sha1`, … as written.
    public var algorithm: String
    /// The shared secret, base64, as written.
    public var secret: String

    public init(name: String, algorithm: String, secret: String) {
        self.name = name
        self.algorithm = algorithm
        self.secret = secret
    }

    /// The algorithms ldns signs with (hmac-md5 is refused: it is broken).
    public static let algorithms: Set<String> = [
        "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512",
    ]

    /// Why a key file was refused.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The first `key` clause of a BIND key file. Comments (`#`, `//`, `/* */`) are skipped.
    public init(keyFile text: String) throws(ParseError) {
        guard text.utf8.count <= 64 * 1024 else { throw ParseError(description: "the key file is over 64 KiB") }
        let tokens = try Self.tokens(text)
        var i = 0
        func next() -> Token? {
            defer { i += 1 }
            return i < tokens.count ? tokens[i] : nil
        }
        guard next() == .word("key") else {
            throw ParseError(description: "no 'key \"NAME\" { … };' clause (as tsig-keygen writes it)")
        }
        guard case .quoted(let name)? = next(), !name.isEmpty, name.utf8.count <= 253 else {
            throw ParseError(description: "the key has no name in quotes")
        }
        guard next() == .symbol("{") else { throw ParseError(description: "'{' missing after the key's name") }
        var algorithm: String?
        var secret: String?
        while let token = next(), token != .symbol("}") {
            guard case .word(let field) = token else {
                throw ParseError(description: "unexpected \(token) in the key clause")
            }
            let value: String
            switch next() {
            case .word(let word)?: value = word
            case .quoted(let quoted)?: value = quoted
            default: throw ParseError(description: "'\(field)' has no value")
            }
            guard next() == .symbol(";") else { throw ParseError(description: "';' missing after '\(field)'") }
            switch field.lowercased() {
            case "algorithm": algorithm = value.lowercased()
            case "secret": secret = value
            default: throw ParseError(description: "unknown field '\(field)' in the key clause")
            }
        }
        guard let algorithm else { throw ParseError(description: "the key names no algorithm") }
        guard Self.algorithms.contains(algorithm) else {
            throw ParseError(
                description:
                    "algorithm '\(algorithm)' is not one of \(Self.algorithms.sorted().joined(separator: ", "))")
        }
        guard let secret, !secret.isEmpty, secret.utf8.count <= 1024,
            secret.utf8.allSatisfy({ Self.isBase64($0) })
        else { throw ParseError(description: "the key's secret is missing or not base64") }
        self.init(name: name, algorithm: algorithm, secret: secret)
    }

    private enum Token: Equatable, CustomStringConvertible {
        case word(String)
        case quoted(String)
        case symbol(Character)

        var description: String {
            switch self {
            case .word(let word): "'\(word)'"
            case .quoted(let text): "\"\(text)\""
            case .symbol(let symbol): "'\(symbol)'"
            }
        }
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2B || byte == 0x2F || byte == 0x3D
    }

    private static func tokens(_ text: String) throws(ParseError) -> [Token] {
        var tokens: [Token] = []
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace {
                i += 1
            } else if c == "#" || (c == "/" && i + 1 < chars.count && chars[i + 1] == "/") {
                while i < chars.count && chars[i] != "\n" { i += 1 }
            } else if c == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                i += 2
                while i + 1 < chars.count && !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                guard i + 1 < chars.count else { throw ParseError(description: "a comment is not closed") }
                i += 2
            } else if c == "{" || c == "}" || c == ";" {
                tokens.append(.symbol(c))
                i += 1
            } else if c == "\"" {
                var value = ""
                i += 1
                while i < chars.count && chars[i] != "\"" && chars[i] != "\n" {
                    value.append(chars[i])
                    i += 1
                }
                guard i < chars.count, chars[i] == "\"" else { throw ParseError(description: "a quote is not closed") }
                i += 1
                tokens.append(.quoted(value))
            } else {
                var word = ""
                while i < chars.count, !chars[i].isWhitespace, !"{};\"#".contains(chars[i]) {
                    word.append(chars[i])
                    i += 1
                }
                tokens.append(.word(word))
            }
            guard tokens.count <= 4096 else { throw ParseError(description: "the key file has too many tokens") }
        }
        return tokens
    }
}
