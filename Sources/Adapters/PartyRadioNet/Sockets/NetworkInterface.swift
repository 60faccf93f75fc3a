import Foundation
import Glibc

/// A network interface with an IPv4 address, found through getifaddrs(3).
public struct NetworkInterface: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let index: Int32
    public let addressNetworkOrder: UInt32
    public let isLoopback: Bool
    public let supportsMulticast: Bool
    public let isUp: Bool

    public var address: SocketAddress { SocketAddress(addressNetworkOrder: addressNetworkOrder, port: 0) }
    public var description: String { "\(name) (\(address.host))" }

    public enum Problem: Error, CustomStringConvertible, Sendable {
        case notFound(String, available: [String])
        case noIPv4(String)
        case noMulticast(String)
        case noneUsable

        public var description: String {
            switch self {
            case .notFound(let name, let available):
                "There is no network interface '\(name)'; use one of: \(available.joined(separator: ", "))."
            case .noIPv4(let name): "Interface '\(name)' has no IPv4 address; pick another with --interface."
            case .noMulticast(let name): "Interface '\(name)' cannot do multicast; pick another with --interface."
            case .noneUsable:
                "No network interface is up with an IPv4 address and multicast; connect to a network or pass --interface."
            }
        }
    }

    /// All interfaces that have an IPv4 address, in the system's order; none if getifaddrs(3) fails.
    public static func all() -> [NetworkInterface] {
        let entries = try? Syscall.withInterfaceAddresses { list in
            var result: [(name: String, address: UInt32, flags: Int32)] = []
            for entry in sequence(first: list, next: { $0?.pointee.ifa_next }) {
                guard let entry, let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET)
                else { continue }
                let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                result.append((String(cString: entry.pointee.ifa_name), ipv4, Int32(entry.pointee.ifa_flags)))
            }
            return result
        }
        return (entries ?? []).map { entry in
            NetworkInterface(
                name: entry.name, index: Int32((try? Syscall.interfaceIndex(entry.name)) ?? 0),
                addressNetworkOrder: entry.address, isLoopback: entry.flags & Int32(IFF_LOOPBACK) != 0,
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
                if (try? Syscall.interfaceIndex(name)) != nil { throw .noIPv4(name) }
                throw .notFound(name, available: names.sorted())
            }
            guard match.supportsMulticast || match.isLoopback else { throw .noMulticast(name) }
            return match
        }
        let usable = interfaces.filter { $0.isUp && $0.supportsMulticast && !$0.isLoopback }
        if let route = defaultRouteInterface(), let match = usable.first(where: { $0.name == route }) { return match }
        guard let first = usable.first else { throw .noneUsable }
        return first
    }

    /// The interface of the IPv4 default route, from /proc/net/route.
    static func defaultRouteInterface() -> String? {
        guard let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count > 2, fields[1] == "00000000" { return String(fields[0]) }
        }
        return nil
    }
}
