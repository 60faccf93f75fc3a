import Glibc
import PartyRadioCore

/// An IPv4 address and UDP port, convertible to and from `sockaddr_in`.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address in network byte order, as `in_addr.s_addr` holds it.
    public let addressNetworkOrder: UInt32
    public let port: UInt16

    public init(addressNetworkOrder: UInt32, port: UInt16) {
        self.addressNetworkOrder = addressNetworkOrder
        self.port = port
    }

    /// Parses dotted-quad text such as `10.99.0.1`.
    public init?(_ text: String, port: UInt16) {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        self.init(addressNetworkOrder: address.s_addr, port: port)
    }

    public static func any(port: UInt16) -> SocketAddress { SocketAddress(addressNetworkOrder: 0, port: port) }

    /// A multicast group's address and port.
    public init(_ group: MulticastGroup) {
        let value = UInt32(group.a) << 24 | UInt32(group.b) << 16 | UInt32(group.c) << 8 | UInt32(group.d)
        self.init(addressNetworkOrder: value.bigEndian, port: group.port)
    }

    init(_ raw: sockaddr_in) {
        self.init(addressNetworkOrder: raw.sin_addr.s_addr, port: UInt16(bigEndian: raw.sin_port))
    }

    var raw: sockaddr_in {
        var raw = sockaddr_in()
        raw.sin_family = sa_family_t(AF_INET)
        raw.sin_port = port.bigEndian
        raw.sin_addr.s_addr = addressNetworkOrder
        return raw
    }

    public var host: String {
        let value = UInt32(bigEndian: addressNetworkOrder)
        return "\(value >> 24).\((value >> 16) & 255).\((value >> 8) & 255).\(value & 255)"
    }

    public var description: String { "\(host):\(port)" }
}
