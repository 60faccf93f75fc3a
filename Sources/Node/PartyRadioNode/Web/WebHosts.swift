import Glibc
import PartyRadioCore

/// The `Host` headers the DJ's web server answers (docs/WEB.md, "Host check"): its own addresses
/// and names at its own port. A DNS rebinding page (an attacker's name that first points at the
/// attacker, then at the DJ) is same-origin with itself, so its writes pass the `Origin` check;
/// what gives it away is its `Host`, the attacker's name. Such a request is answered 421
/// (Misdirected Request) before anything else is read.
///
/// Taken: an IPv4 address of the DJ's, an IPv6 address of the DJ's in brackets (with or without a
/// zone, `%25eth0` or `%eth0`), the loopback addresses, `localhost`, this machine's host name
/// and `NAME.local`, and the DJ's name in a unicast DNS-SD domain (`dj-<station ID>.DOMAIN`),
/// each with a trailing dot or without; then the server's port, or no port when it is 80. Case is
/// ignored (names and hexadecimal digits alike); addresses are compared as bytes, so every
/// spelling of an IPv6 address is the same.
struct WebHosts: Sendable {
    let port: UInt16
    /// IPv4 addresses (4 bytes) and IPv6 addresses (16 bytes, no zone).
    private let addresses: Set<[UInt8]>
    /// Lower case, without a trailing dot.
    private let names: Set<String>

    /// - Parameters:
    ///   - addresses: the DJ's IP addresses as text (`10.0.0.1`, `fd99::1`, `fe80::1%eth0`);
    ///     anything else is left out.
    ///   - names: its names (`partybox`, `partybox.local`, `dj-….example.net.`).
    init(port: UInt16, addresses: [String], names: [String]) {
        self.port = port
        let loopback = ["127.0.0.1", "::1"]
        self.addresses = Set((addresses + loopback).compactMap(Self.addressBytes))
        self.names = Set((names + ["localhost"]).map(Self.plainName).filter { !$0.isEmpty })
    }

    /// Whether a request with this `Host` header is meant for this server (nil: none sent).
    func admits(_ host: String?) -> Bool {
        guard let host, (1...300).contains(host.utf8.count) else { return false }
        let text = host.lowercased()
        let portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            let literal = text[text.index(after: text.startIndex)..<close]
            guard let address = Self.ipv6Bytes(withZone: literal), addresses.contains(address) else { return false }
            let after = text[text.index(after: close)...]
            if after.isEmpty {
                portText = nil
            } else {
                guard after.first == ":" else { return false }
                portText = after.dropFirst()
            }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return false }
            portText = parts.count == 2 ? parts[1] : nil
            let name = String(parts[0])
            if let address = Self.ipv4Bytes(name) {
                guard addresses.contains(address) else { return false }
            } else {
                guard names.contains(Self.plainName(name)) else { return false }
            }
        }
        guard let portText else { return port == 80 }
        guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let given = Int(portText)
        else { return false }
        return given == Int(port)
    }

    /// Lower case, one trailing dot dropped (`Partybox.local.` is `partybox.local`).
    private static func plainName(_ name: String) -> String {
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// An address as text, IPv4 or IPv6 (a zone after `%` is left out).
    private static func addressBytes(_ text: String) -> [UInt8]? {
        ipv4Bytes(text) ?? ipv6Bytes(withZone: Substring(text))
    }

    /// A dotted-quad IPv4 address (inet_pton's strict form: no octal, hexadecimal or short forms).
    private static func ipv4Bytes(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// An IPv6 address with an optional zone: `fe80::1`, `fe80::1%eth0`, `fe80::1%25eth0` (RFC 6874).
    private static func ipv6Bytes(withZone text: Substring) -> [UInt8]? {
        var address = text
        if let percent = text.firstIndex(of: "%") {
            address = text[..<percent]
            var zone = text[text.index(after: percent)...]
            if zone.hasPrefix("25") { zone = zone.dropFirst(2) }  // `%25` is `%` escaped, as URLs write it
            let zoneByte: (UInt8) -> Bool = {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A)
                    || [0x2D, 0x2E, 0x5F, 0x7E].contains($0)
            }
            guard (1...64).contains(zone.utf8.count), zone.utf8.allSatisfy(zoneByte) else { return nil }
        }
        var bytes = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, String(address), &bytes) == 1 else { return nil }
        return withUnsafeBytes(of: &bytes) { Array($0) }
    }
}
