/// The form of a media URL a node fetches ahead for another node's word (docs/PROTOCOL.md,
/// "Next sources"; docs/SECURITY.md): a URL from the network is untrusted, so only plain
/// `http`/`https` URLs of a bounded length and a strict shape are taken. Apple's previews
/// (`https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview…/….m4a`) and the DJ's own
/// media URLs (`http://10.0.0.1:8080/media/<token>`, `http://[fe80::1%25eth0]:8080/media/…`)
/// have it; nothing with credentials, a fragment, spaces, control characters or non-ASCII does.
public enum MediaSource {
    /// The longest source any message carries (the snapshot's limit too).
    public static let maxBytes = 400

    /// Whether `url` is a media URL a node may fetch ahead: `http://` or `https://` (lower case),
    /// a host (a DNS name or IPv4 address of letters, digits, `.` and `-`, or an IPv6 literal in
    /// brackets with an optional `%25` zone) with an optional port 1–65535, then an optional
    /// path and query of printable ASCII without `"<>\^`{|}#`. At most ``maxBytes`` bytes.
    public static func isFetchable(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        guard bytes.count <= maxBytes else { return false }
        let rest: ArraySlice<UInt8>
        if bytes.starts(with: "https://".utf8) {
            rest = bytes[8...]
        } else if bytes.starts(with: "http://".utf8) {
            rest = bytes[7...]
        } else {
            return false
        }
        let authorityEnd = rest.firstIndex { $0 == ascii("/") || $0 == ascii("?") } ?? rest.endIndex
        guard isAuthority(rest[rest.startIndex..<authorityEnd]) else { return false }
        return rest[authorityEnd...].allSatisfy(isPathByte)
    }

    private static func ascii(_ scalar: Unicode.Scalar) -> UInt8 { UInt8(scalar.value) }

    private static func isAuthority(_ authority: ArraySlice<UInt8>) -> Bool {
        guard !authority.isEmpty else { return false }
        var host = authority
        var port: ArraySlice<UInt8>?
        if authority.first == ascii("[") {
            guard let close = authority.firstIndex(of: ascii("]")) else { return false }
            host = authority[authority.startIndex...close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == ascii(":") else { return false }
                port = after.dropFirst()
            }
            guard isIPv6Literal(host) else { return false }
        } else {
            if let colon = authority.firstIndex(of: ascii(":")) {
                host = authority[authority.startIndex..<colon]
                port = authority[(colon + 1)...]
            }
            guard isRegisteredName(host) else { return false }
        }
        if let port { return isPort(port) }
        return true
    }

    /// Letters, digits, `.` and `-`, at most 253 bytes (a DNS name; an IPv4 address fits it too).
    private static func isRegisteredName(_ host: ArraySlice<UInt8>) -> Bool {
        (1...253).contains(host.count) && host.allSatisfy { isAlphanumeric($0) || $0 == ascii(".") || $0 == ascii("-") }
    }

    /// `[` hex digits, `:` and `.` `]`, or with a zone: `[fe80::1%25eth0]` (RFC 6874).
    private static func isIPv6Literal(_ literal: ArraySlice<UInt8>) -> Bool {
        guard literal.count >= 4, literal.count <= 80, literal.first == ascii("["), literal.last == ascii("]") else {
            return false
        }
        let inner = literal.dropFirst().dropLast()
        var address = inner
        if let percent = inner.firstIndex(of: ascii("%")) {
            address = inner[inner.startIndex..<percent]
            let zone = inner[percent...]
            guard zone.starts(with: "%25".utf8), zone.count > 3,
                zone.dropFirst(3).allSatisfy({
                    isAlphanumeric($0) || $0 == ascii(".") || $0 == ascii("_") || $0 == ascii("~") || $0 == ascii("-")
                })
            else { return false }
        }
        return address.contains(ascii(":"))
            && address.allSatisfy { isHexDigit($0) || $0 == ascii(":") || $0 == ascii(".") }
    }

    private static func isPort(_ port: ArraySlice<UInt8>) -> Bool {
        guard (1...5).contains(port.count), port.allSatisfy({ $0 >= ascii("0") && $0 <= ascii("9") }) else {
            return false
        }
        let value = port.reduce(0) { $0 * 10 + Int($1 - ascii("0")) }
        return (1...65535).contains(value)
    }

    /// Printable ASCII but space and `"<>\^`{|}#` (RFC 3986 leaves them out of a URL, and a
    /// fragment is never sent to a server).
    private static func isPathByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20, byte < 0x7F else { return false }
        return !"\"<>\\^`{|}#".utf8.contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= ascii("0") && byte <= ascii("9")) || (byte >= ascii("a") && byte <= ascii("z"))
            || (byte >= ascii("A") && byte <= ascii("Z"))
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= ascii("0") && byte <= ascii("9")) || (byte >= ascii("a") && byte <= ascii("f"))
            || (byte >= ascii("A") && byte <= ascii("F"))
    }
}
