/// A station's 64-bit identifier: the first eight bytes of a hash of its public key.
///
/// Written as 16 lowercase hex digits in DNS-SD TXT records and on the command line.
public struct StationID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses exactly 16 hex digits, in either case.
    public init?(hex: String) {
        guard let value = Hex.decode(hex, as: UInt64.self) else { return nil }
        rawValue = value
    }

    /// 16 lowercase hex digits.
    public var hex: String { Hex.encode(rawValue) }

    public var description: String { hex }

    /// The station's multicast group: 239.255.A.B in the organisation-local scope (RFC 2365),
    /// and a port in 40000–49999, both taken from the ID so every node derives the same.
    public var multicastGroup: MulticastGroup {
        let a = UInt8(truncatingIfNeeded: rawValue >> 56)
        var b = UInt8(truncatingIfNeeded: rawValue >> 48)
        if b == 0 || b == 255 { b = 1 }  // keep clear of .0 and .255 addresses
        if a == 255 && b == 250 { b = 251 }  // 239.255.255.250 is SSDP
        let port = UInt16(40000 + (rawValue & 0xFFFF) % 10000)
        return MulticastGroup(address: (239, 255, a, b), port: port)
    }
}

/// A station's multicast group and port: `239.255.C.D` for IPv4, and its IPv6 twin
/// ``ipv6Address`` (`ff12::5052:CCDD`) on the same port. Only the IPv4 form is published (`grp`);
/// every node derives the other from it, so the TXT record is the same on every network.
public struct MulticastGroup: Hashable, Sendable, CustomStringConvertible {
    public let a: UInt8, b: UInt8, c: UInt8, d: UInt8
    public let port: UInt16

    public init(address: (UInt8, UInt8, UInt8, UInt8), port: UInt16) {
        (a, b, c, d) = address
        self.port = port
    }

    public var addressString: String { "\(a).\(b).\(c).\(d)" }

    /// The group's IPv6 address: `ff12::5052:CCDD`, where CC and DD are the IPv4 group's last two
    /// octets in hex. `ff12::/16` is transient (not IANA-assigned, flag T) and link-local in scope
    /// (RFC 4291), so like IPv4's TTL 1 it never leaves the link; `5052` is "PR".
    public var ipv6Bytes: [UInt8] { [0xFF, 0x12] + [UInt8](repeating: 0, count: 10) + [0x50, 0x52, c, d] }

    /// ``ipv6Bytes`` as text (`ff12::5052:c09d`).
    public var ipv6Address: String { "ff12::5052:\(String(UInt16(c) << 8 | UInt16(d), radix: 16))" }
    public var description: String { "\(addressString):\(port)" }

    /// Parses `239.255.A.B:PORT` as published in the `grp` TXT key; only 239.255.0.0/16 is accepted.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else { return nil }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4, octets[0] == 239, octets[1] == 255 else { return nil }
        self.init(address: (octets[0], octets[1], octets[2], octets[3]), port: port)
    }
}
