/// DNS-SD names in a unicast domain (RFC 6763), and the bits of DNS wire format that browsing
/// reads out of ldns's records. Pure: what goes to ldns is presentation text built here, and what
/// comes back is raw record data parsed here (and fuzzed: `scripts/fuzz dns`).
public enum DNSName {
    /// `_partyradio._udp.DOMAIN.`: the name whose PTR records list the stations.
    public static func serviceName(domain: String) -> String {
        "\(StationAdvert.serviceType).\(absolute(domain))"
    }

    /// `INSTANCE._partyradio._udp.DOMAIN.` with the instance label escaped for presentation format.
    public static func instanceName(_ instance: String, domain: String) -> String {
        "\(escapeLabel(instance)).\(serviceName(domain: domain))"
    }

    /// The DJ's host name in the domain: `dj-<station ID>.DOMAIN.` (unique, and plain ASCII).
    public static func hostName(station: StationID, domain: String) -> String {
        "dj-\(station.hex).\(absolute(domain))"
    }

    /// The instance names a DJ tries in turn when the zone already holds its name for another DJ
    /// (as Avahi renames on an mDNS conflict): `Rooftop`, `Rooftop #2`, … `Rooftop #9`.
    public static func instanceCandidates(_ name: String) -> [String] {
        [name] + (2...9).map { "\(name) #\($0)" }
    }

    /// The domain with one trailing dot.
    public static func absolute(_ domain: String) -> String {
        domain.hasSuffix(".") ? domain : domain + "."
    }

    /// Why a `--domain` is refused.
    public static func check(domain: String) -> String? {
        let trimmed = domain.hasSuffix(".") ? String(domain.dropLast()) : domain
        let labels = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 200 else { return "a domain is 1 to 200 characters" }
        for label in labels {
            guard !label.isEmpty, label.utf8.count <= 63,
                label.utf8.allSatisfy({
                    ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
                        || $0 == 0x5F
                })
            else { return "'\(label)' is not a DNS label (letters, digits, '-' and '_', 1 to 63 of them)" }
        }
        return nil
    }

    /// One label in presentation format: `.`, `\`, `"`, `(`, `)`, `;`, `@`, `$` and space get a
    /// backslash, other bytes outside printable ASCII (UTF-8 included) become `\DDD`.
    public static func escapeLabel(_ label: String) -> String {
        var out = ""
        for byte in label.utf8.prefix(63) {
            switch byte {
            case 0x2E, 0x5C, 0x22, 0x28, 0x29, 0x3B, 0x40, 0x24, 0x20:
                out += "\\" + String(UnicodeScalar(byte))
            case 0x21...0x7E:
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let digits = String(byte)
                out += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
            }
        }
        return out
    }

    /// One TXT character-string in presentation format: quoted, `"` and `\` escaped, bytes outside
    /// printable ASCII as `\DDD`; at most 255 bytes of it.
    public static func quoteTXT(_ string: String) -> String {
        var out = "\""
        for byte in string.utf8.prefix(255) {
            switch byte {
            case 0x22, 0x5C: out += "\\" + String(UnicodeScalar(byte))
            case 0x20...0x7E: out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let digits = String(byte)
                out += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
            }
        }
        return out + "\""
    }

    /// The labels of a name in wire format (length-prefixed labels, a zero length at the end; no
    /// compression pointers: ldns hands names over uncompressed). Nil if malformed.
    public static func labels(wire bytes: [UInt8]) -> [[UInt8]]? {
        var labels: [[UInt8]] = []
        var i = 0
        var total = 0
        while i < bytes.count {
            let length = Int(bytes[i])
            if length == 0 { return i == bytes.count - 1 ? labels : nil }
            guard length <= 63, i + 1 + length <= bytes.count else { return nil }
            total += length + 1
            guard total <= 255 else { return nil }
            labels.append(Array(bytes[(i + 1)..<(i + 1 + length)]))
            i += 1 + length
        }
        return nil  // no terminating zero
    }

    /// The station's instance name from the PTR target's first label: text as the DJ wrote it
    /// (invalid UTF-8 repaired); nil if malformed.
    public static func instance(wire bytes: [UInt8]) -> String? {
        guard let first = labels(wire: bytes)?.first, !first.isEmpty else { return nil }
        return String(decoding: first, as: UTF8.self)
    }

    /// A name in wire format as dotted text with a trailing dot (labels escaped); nil if malformed.
    public static func text(wire bytes: [UInt8]) -> String? {
        guard let labels = labels(wire: bytes) else { return nil }
        return labels.map { escapeLabel(String(decoding: $0, as: UTF8.self)) }.joined(separator: ".") + "."
    }

    /// A TXT rdata field (one character-string: a length byte, then that many bytes) as text;
    /// nil if malformed. The advert's parser checks what it says.
    public static func txtString(wire bytes: [UInt8]) -> String? {
        guard let length = bytes.first.map(Int.init), bytes.count == length + 1 else { return nil }
        return String(decoding: bytes[1...], as: UTF8.self)
    }

    /// An A record's data (4 bytes) as dotted text; nil if it is not 4 bytes long.
    public static func ipv4(wire bytes: [UInt8]) -> String? {
        guard bytes.count == 4 else { return nil }
        return bytes.map(String.init).joined(separator: ".")
    }

    /// An AAAA record's data (16 bytes) as text (RFC 5952: lower case, the longest run of two or
    /// more zero groups, the first of equals, as `::`); nil if it is not 16 bytes long, or if the
    /// address is no use beyond one link or as a unicast destination (link-local `fe80::/10`,
    /// multicast, unspecified, loopback, IPv4-mapped), since an AAAA record carries no zone.
    public static func ipv6(wire bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return nil }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        let linkLocal = groups[0] & 0xFFC0 == 0xFE80
        let multicast = bytes[0] == 0xFF
        let unspecifiedOrLoopback = groups[0..<7].allSatisfy { $0 == 0 } && groups[7] <= 1
        let mapped = groups[0..<5].allSatisfy { $0 == 0 } && groups[5] == 0xFFFF
        guard !linkLocal, !multicast, !unspecifiedOrLoopback, !mapped else { return nil }
        return ipv6Text(groups)
    }

    /// Eight 16-bit groups as RFC 5952 text.
    static func ipv6Text(_ groups: [UInt16]) -> String {
        var best = (start: -1, length: 0)
        var i = 0
        while i < groups.count {
            guard groups[i] == 0 else {
                i += 1
                continue
            }
            var j = i
            while j < groups.count && groups[j] == 0 { j += 1 }
            if j - i > best.length && j - i >= 2 { best = (i, j - i) }
            i = j
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}
