import Foundation
import Glibc

/// A network interface with an IPv4 address, IPv6 addresses, or both, found through getifaddrs(3).
public struct NetworkInterface: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let index: Int32
    /// The interface's (first) IPv4 address in network byte order; 0 when it has none.
    public let addressNetworkOrder: UInt32
    /// Its IPv6 addresses (link-local ones with their zone), in the system's order.
    public let ipv6Addresses: [SocketAddress]
    public let isLoopback: Bool
    public let supportsMulticast: Bool
    public let isUp: Bool

    public init(
        name: String, index: Int32, addressNetworkOrder: UInt32, ipv6Addresses: [SocketAddress] = [],
        isLoopback: Bool, supportsMulticast: Bool, isUp: Bool
    ) {
        self.name = name
        self.index = index
        self.addressNetworkOrder = addressNetworkOrder
        self.ipv6Addresses = ipv6Addresses
        self.isLoopback = isLoopback
        self.supportsMulticast = supportsMulticast
        self.isUp = isUp
    }

    public var hasIPv4: Bool { addressNetworkOrder != 0 }
    public var hasIPv6: Bool { !ipv6Addresses.isEmpty }

    /// The families this interface can speak, IPv4 first.
    public var families: [SocketAddress.Family] {
        (hasIPv4 ? [.ipv4] : []) + (hasIPv6 ? [.ipv6] : [])
    }

    /// The IPv6 address to give others: a global or unique-local one (it needs no zone, so it
    /// goes into URLs as it is) before a link-local one; nil without IPv6.
    public var preferredIPv6: SocketAddress? {
        ipv6Addresses.first { !$0.isLinkLocal } ?? ipv6Addresses.first
    }

    /// The address this node gives others (its media URLs, its web page): IPv4 when the
    /// interface has it (every peer of a dual-stack LAN has it too), else ``preferredIPv6``.
    public var address: SocketAddress {
        if hasIPv4 { return SocketAddress(addressNetworkOrder: addressNetworkOrder, port: 0) }
        return preferredIPv6 ?? SocketAddress(addressNetworkOrder: 0, port: 0)
    }

    public var description: String {
        let v4 = hasIPv4 ? [SocketAddress(addressNetworkOrder: addressNetworkOrder, port: 0).host] : []
        return "\(name) (\((v4 + [preferredIPv6?.host].compactMap { $0 }).joined(separator: ", ")))"
    }

    public enum Problem: Error, CustomStringConvertible, Sendable {
        case notFound(String, available: [String])
        case noAddress(String)
        case noMulticast(String)
        case noneUsable

        public var description: String {
            switch self {
            case .notFound(let name, let available):
                "There is no network interface '\(name)'; use one of: \(available.joined(separator: ", "))."
            case .noAddress(let name):
                "Interface '\(name)' has no IPv4 or IPv6 address; pick another with --interface."
            case .noMulticast(let name): "Interface '\(name)' cannot do multicast; pick another with --interface."
            case .noneUsable:
                "No network interface is up with an IP address and multicast; connect to a network or pass --interface."
            }
        }
    }

    /// All interfaces that have an IPv4 or IPv6 address, in the system's order (one entry per
    /// interface); none if getifaddrs(3) fails.
    public static func all() -> [NetworkInterface] {
        struct Entry {
            var name: String
            var flags: Int32
            var ipv4: UInt32 = 0
            var ipv6: [SocketAddress] = []
        }
        let entries = try? Syscall.withInterfaceAddresses { list in
            var result: [Entry] = []
            for entry in sequence(first: list, next: { $0?.pointee.ifa_next }) {
                guard let entry, let raw = entry.pointee.ifa_addr else { continue }
                let family = Int32(raw.pointee.sa_family)
                guard family == AF_INET || family == AF_INET6 else { continue }
                let name = String(cString: entry.pointee.ifa_name)
                var slot = result.firstIndex { $0.name == name } ?? result.endIndex
                if slot == result.endIndex {
                    result.append(Entry(name: name, flags: Int32(entry.pointee.ifa_flags)))
                    slot = result.endIndex - 1
                }
                if family == AF_INET {
                    let ipv4 = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    if result[slot].ipv4 == 0 { result[slot].ipv4 = ipv4 }
                } else {
                    let ipv6 = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    let bytes = withUnsafeBytes(of: ipv6.sin6_addr) { Array($0) }
                    result[slot].ipv6.append(SocketAddress(ipv6: bytes, scope: ipv6.sin6_scope_id, port: 0))
                }
            }
            return result
        }
        return (entries ?? []).map { entry in
            NetworkInterface(
                name: entry.name, index: Int32((try? Syscall.interfaceIndex(entry.name)) ?? 0),
                addressNetworkOrder: entry.ipv4, ipv6Addresses: entry.ipv6,
                isLoopback: entry.flags & Int32(IFF_LOOPBACK) != 0,
                supportsMulticast: entry.flags & Int32(IFF_MULTICAST) != 0, isUp: entry.flags & Int32(IFF_UP) != 0)
        }
    }

    /// The interface the user named, or the default the README promises: the default route's
    /// interface, else the first multicast-capable non-loopback one.
    public static func choose(_ name: String?) throws(Problem) -> NetworkInterface {
        let interfaces = all()
        if let name {
            guard let match = interfaces.first(where: { $0.name == name }) else {
                let names = Set(interfaces.map(\.name))
                if (try? Syscall.interfaceIndex(name)) != nil { throw .noAddress(name) }
                throw .notFound(name, available: names.sorted())
            }
            guard match.supportsMulticast || match.isLoopback else { throw .noMulticast(name) }
            return match
        }
        let usable = interfaces.filter { $0.isUp && $0.supportsMulticast && !$0.isLoopback }
        for route in [defaultRouteInterface(), defaultIPv6RouteInterface()].compactMap({ $0 }) {
            if let match = usable.first(where: { $0.name == route }) { return match }
        }
        guard let first = usable.first else { throw .noneUsable }
        return first
    }

    /// A routing table of /proc, whole: `String(contentsOfFile:)` reads only its first 4 KB (/proc
    /// says its size is 0), about 30 routes, and the default route may come after them.
    private static func procTable(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() else { return nil }
        try? handle.close()
        return String(decoding: data, as: UTF8.self)
    }

    /// The interface of the IPv4 default route, from /proc/net/route.
    static func defaultRouteInterface() -> String? {
        guard let table = procTable("/proc/net/route") else { return nil }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count > 2, fields[1] == "00000000" { return String(fields[0]) }
        }
        return nil
    }

    /// The interface of the IPv6 default route, from /proc/net/ipv6_route (destination ::/0).
    static func defaultIPv6RouteInterface() -> String? {
        guard let table = procTable("/proc/net/ipv6_route") else { return nil }
        for line in table.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count == 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00", fields[9] != "lo"
            {
                return String(fields[9])
            }
        }
        return nil
    }
}
