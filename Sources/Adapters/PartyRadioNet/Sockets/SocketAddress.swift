import Glibc
import PartyRadioCore
import Synchronization

/// An IP address of either family and a UDP port, convertible to and from `sockaddr_in` and
/// `sockaddr_in6`.
///
/// An IPv6 link-local address carries its zone (the interface it is on, `sin6_scope_id`): text
/// writes it `fe80::1%eth0`, as getaddrinfo(3) and ping do, and the core's ``PeerAddress`` keeps
/// that text, so a reply to a link-local sender leaves by the interface it came in on.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address family.
    public enum Family: Hashable, Sendable, CustomStringConvertible {
        case ipv4, ipv6
        public var description: String { self == .ipv4 ? "IPv4" : "IPv6" }
        var domain: Int32 { self == .ipv4 ? AF_INET : AF_INET6 }
    }

    enum IP: Hashable, Sendable {
        /// In network byte order, as `in_addr.s_addr` holds it.
        case v4(UInt32)
        /// Bytes 0–7 and 8–15 as big-endian integers, and the zone's interface index (0: none).
        case v6(high: UInt64, low: UInt64, scope: UInt32)
    }

    let ip: IP
    public let port: UInt16

    init(ip: IP, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// An IPv4 address in network byte order.
    public init(addressNetworkOrder: UInt32, port: UInt16) {
        self.init(ip: .v4(addressNetworkOrder), port: port)
    }

    /// An IPv6 address from its 16 bytes (network order) and zone (an interface index, 0: none).
    public init(ipv6 bytes: [UInt8], scope: UInt32 = 0, port: UInt16) {
        precondition(bytes.count == 16, "an IPv6 address has 16 bytes")
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(ip: .v6(high: high, low: low, scope: scope), port: port)
    }

    /// Parses a numeric address: dotted-quad IPv4 (`10.99.0.1`), or IPv6 (`fd99:10::1`), with an
    /// optional zone after `%` naming an interface or its index (`fe80::1%eth0`, `fe80::1%2`).
    /// Brackets are not part of an address; nil for anything else, and for a zone on an address
    /// that takes none or a zone naming no interface.
    public init?(_ text: String, port: UInt16) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(addressNetworkOrder: v4.s_addr, port: port)
            return
        }
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(parts[0]), &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        var scope: UInt32 = 0
        if parts.count == 2 {
            let zone = String(parts[1])
            if let number = UInt32(zone), number > 0 {
                scope = number
            } else if !zone.isEmpty, let index = Self.zoneIndex(zone) {
                scope = index
            } else {
                return nil
            }
            guard Self.takesZone(bytes) else { return nil }
        }
        self.init(ipv6: bytes, scope: scope, port: port)
    }

    /// What the core calls a peer, as a socket address; nil when its host is not a numeric address.
    public init?(peer: PeerAddress) {
        self.init(peer.host, port: peer.port)
    }

    /// This address as the core sees it (the host as ``host`` writes it).
    public var peer: PeerAddress { PeerAddress(host: host, port: port) }

    /// The wildcard address of `family` (`0.0.0.0` or `::`).
    public static func any(port: UInt16, family: Family = .ipv4) -> SocketAddress {
        family == .ipv4
            ? SocketAddress(addressNetworkOrder: 0, port: port)
            : SocketAddress(ip: .v6(high: 0, low: 0, scope: 0), port: port)
    }

    /// A multicast group's address and port in `family` (``MulticastGroup/ipv6Address`` for IPv6,
    /// a link-local group, so it takes the zone `scope`: the interface's index).
    public init(_ group: MulticastGroup, family: Family = .ipv4, scope: UInt32 = 0) {
        switch family {
        case .ipv4:
            let value = UInt32(group.a) << 24 | UInt32(group.b) << 16 | UInt32(group.c) << 8 | UInt32(group.d)
            self.init(addressNetworkOrder: value.bigEndian, port: group.port)
        case .ipv6:
            self.init(ipv6: group.ipv6Bytes, scope: scope, port: group.port)
        }
    }

    public var family: Family {
        if case .v4 = ip { return .ipv4 }
        return .ipv6
    }

    /// The IPv4 address in network byte order; nil for IPv6.
    public var addressNetworkOrder: UInt32? {
        if case .v4(let value) = ip { return value }
        return nil
    }

    /// The 16 bytes of an IPv6 address (network order); nil for IPv4.
    public var ipv6Bytes: [UInt8]? {
        guard case .v6(let high, let low, _) = ip else { return nil }
        return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The zone of an IPv6 address (an interface index); 0 for none and for IPv4.
    public var scope: UInt32 {
        if case .v6(_, _, let scope) = ip { return scope }
        return 0
    }

    /// fe80::/10: valid on one link only, and so only with its zone.
    public var isLinkLocal: Bool {
        guard case .v6(let high, _, _) = ip else { return false }
        return high >> 54 == 0x3FA
    }

    /// An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`).
    var isIPv4Mapped: Bool {
        guard case .v6(let high, let low, _) = ip else { return false }
        return high == 0 && low >> 32 == 0xFFFF
    }

    /// Link-local unicast and link-local multicast (ff02::/16, ff12::/16) are the addresses whose
    /// text may carry a zone.
    static func takesZone(_ bytes: [UInt8]) -> Bool {
        (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) || (bytes[0] == 0xFF && bytes[1] & 0x0F == 0x02)
    }

    /// The address as text, without the port: dotted quad, or RFC 5952 IPv6 (inet_ntop) with
    /// `%zone` (the interface's name, else its index) when it has one. An IPv4-mapped IPv6 address
    /// is written as the IPv4 address it stands for.
    public var host: String {
        switch ip {
        case .v4(let raw):
            let value = UInt32(bigEndian: raw)
            return "\(value >> 24).\((value >> 16) & 255).\((value >> 8) & 255).\(value & 255)"
        case .v6(_, let low, let scope):
            if isIPv4Mapped {
                return SocketAddress(addressNetworkOrder: UInt32(truncatingIfNeeded: low).bigEndian, port: port).host
            }
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: ipv6Bytes ?? []) }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard scope != 0 else { return address }
            return "\(address)%\(Self.zoneName(scope))"
        }
    }

    /// An interface's name for a zone, else its index as digits. Remembered: glibc's
    /// if_indextoname opens a socket for every call, and a link-local peer's every datagram asks.
    static func zoneName(_ index: UInt32) -> String {
        if let known = zoneNames.withLock({ $0[index] }) { return known }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &name) != nil else { return String(index) }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        zoneNames.withLock { $0[index] = text }
        return text
    }

    private static let zoneNames = Mutex<[UInt32: String]>([:])

    /// An interface's index for a zone's name, nil for none (remembered, as ``zoneName(_:)``).
    static func zoneIndex(_ name: String) -> UInt32? {
        if let known = zoneNames.withLock({ $0.first { $0.value == name }?.key }) { return known }
        guard let index = try? Syscall.interfaceIndex(name) else { return nil }
        zoneNames.withLock { $0[index] = name }
        return index
    }

    /// `10.99.0.1:4000` or `[fd99::1]:4000`.
    public var description: String { family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    // MARK: C

    /// From a `sockaddr_in` or `sockaddr_in6` in `storage`; nil for another family.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let raw = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            self.init(addressNetworkOrder: raw.sin_addr.s_addr, port: UInt16(bigEndian: raw.sin_port))
        case AF_INET6:
            let raw = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: raw.sin6_addr) { Array($0) }
            self.init(ipv6: bytes, scope: raw.sin6_scope_id, port: UInt16(bigEndian: raw.sin6_port))
        default:
            return nil
        }
    }

    /// The address as a `sockaddr_storage` holding a `sockaddr_in` or `sockaddr_in6`, and its length.
    var raw: (storage: sockaddr_storage, length: socklen_t) {
        var storage = sockaddr_storage()
        switch ip {
        case .v4(let value):
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = port.bigEndian
            raw.sin_addr.s_addr = value
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: raw, as: sockaddr_in.self) }
            return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
        case .v6(_, _, let scope):
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = port.bigEndian
            raw.sin6_scope_id = scope
            withUnsafeMutableBytes(of: &raw.sin6_addr) { $0.copyBytes(from: ipv6Bytes ?? []) }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: raw, as: sockaddr_in6.self) }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
}
