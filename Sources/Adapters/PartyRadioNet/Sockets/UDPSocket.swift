import Glibc
import PartyRadioCore

/// A non-blocking UDP socket of one address family with the multicast options partyradio needs.
///
/// Owns its descriptor: ``close()`` releases it. Methods are called from one thread (the
/// node's loop), so the class holds no lock and is not Sendable. Every call goes through
/// ``Syscall``: failures are ``SystemCallError``s naming the call and its errno.
///
/// An IPv6 socket is IPv6 only (`IPV6_V6ONLY`): a dual-stack node opens one socket per family on
/// the same port, so each family's traffic keeps its own addresses and multicast options.
public final class UDPSocket {
    public let descriptor: Int32
    public let family: SocketAddress.Family
    private var closed = false

    public init(family: SocketAddress.Family = .ipv4) throws(SystemCallError) {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = try Syscall.socket(domain: family.domain, type: type, protocol: 0)
        self.family = family
        if family == .ipv6 {
            do throws(SystemCallError) {
                try Syscall.setOption(
                    descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, Int32(1), label: "IPV6_V6ONLY")
            } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    public func close() {
        guard !closed else { return }
        closed = true
        try? Syscall.close(descriptor)  // nothing to do about it: the descriptor is gone either way
    }

    /// Lets several sockets on one host bind the same group and port (one per process).
    public func allowAddressReuse() throws(SystemCallError) {
        try Syscall.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, Int32(1), label: "SO_REUSEADDR")
    }

    /// Asks for a receive buffer of `bytes` (the kernel caps it at `net.core.rmem_max`), so a burst
    /// of datagrams waits for the node instead of pushing real ones out.
    public func setReceiveBuffer(bytes: Int32) throws(SystemCallError) {
        try Syscall.setOption(descriptor, level: SOL_SOCKET, name: SO_RCVBUF, bytes, label: "SO_RCVBUF")
    }

    public func bind(_ address: SocketAddress) throws(SystemCallError) {
        try Syscall.bind(descriptor, address)
    }

    /// The address the socket is bound to (for the port the kernel picked).
    public func localAddress() throws(SystemCallError) -> SocketAddress {
        try Syscall.localAddress(descriptor)
    }

    /// Sends multicast out of `interface` only, with TTL (hop limit) 1 so it never crosses a
    /// router, and loops it back so other processes on this host hear it too.
    public func configureMulticastSending(interface: NetworkInterface) throws(SystemCallError) {
        switch family {
        case .ipv4:
            var request = ip_mreqn()
            request.imr_ifindex = interface.index
            request.imr_address.s_addr = interface.addressNetworkOrder
            let ip = Int32(IPPROTO_IP)
            try Syscall.setOption(descriptor, level: ip, name: IP_MULTICAST_IF, request, label: "IP_MULTICAST_IF")
            try Syscall.setOption(descriptor, level: ip, name: IP_MULTICAST_TTL, UInt8(1), label: "IP_MULTICAST_TTL")
            try Syscall.setOption(descriptor, level: ip, name: IP_MULTICAST_LOOP, UInt8(1), label: "IP_MULTICAST_LOOP")
        case .ipv6:
            let ipv6 = Int32(IPPROTO_IPV6)
            try Syscall.setOption(
                descriptor, level: ipv6, name: IPV6_MULTICAST_IF, UInt32(interface.index), label: "IPV6_MULTICAST_IF")
            try Syscall.setOption(
                descriptor, level: ipv6, name: IPV6_MULTICAST_HOPS, Int32(1), label: "IPV6_MULTICAST_HOPS")
            try Syscall.setOption(
                descriptor, level: ipv6, name: IPV6_MULTICAST_LOOP, UInt32(1), label: "IPV6_MULTICAST_LOOP")
        }
    }

    /// Joins `group` (its address of this socket's family) on `interface`.
    public func join(_ group: MulticastGroup, interface: NetworkInterface) throws(SystemCallError) {
        switch family {
        case .ipv4:
            var request = ip_mreqn()
            request.imr_multiaddr.s_addr = SocketAddress(group).addressNetworkOrder ?? 0
            request.imr_address.s_addr = interface.addressNetworkOrder
            request.imr_ifindex = interface.index
            let ip = Int32(IPPROTO_IP)
            try Syscall.setOption(descriptor, level: ip, name: IP_ADD_MEMBERSHIP, request, label: "IP_ADD_MEMBERSHIP")
            // Only datagrams for groups this socket joined, not every group the host joined.
            try Syscall.setOption(descriptor, level: ip, name: IP_MULTICAST_ALL, Int32(0), label: "IP_MULTICAST_ALL")
        case .ipv6:
            var request = ipv6_mreq()
            withUnsafeMutableBytes(of: &request.ipv6mr_multiaddr) { $0.copyBytes(from: group.ipv6Bytes) }
            request.ipv6mr_interface = UInt32(interface.index)
            let ipv6 = Int32(IPPROTO_IPV6)
            // ipv6_mreq holds a union (in6_addr), which Swift does not see as bitwise-copyable: its bytes go.
            let bytes = withUnsafeBytes(of: request) { Array($0) }
            try Syscall.setOption(
                descriptor, level: ipv6, name: IPV6_ADD_MEMBERSHIP, bytes: bytes, label: "IPV6_ADD_MEMBERSHIP")
            try Syscall.setOption(
                descriptor, level: ipv6, name: Self.ipv6MulticastAll, Int32(0), label: "IPV6_MULTICAST_ALL")
        }
    }

    /// `IPV6_MULTICAST_ALL` (Linux 4.20), IPv6's `IP_MULTICAST_ALL`; glibc's headers lack it.
    static let ipv6MulticastAll: Int32 = 29

    /// Sends one datagram. A full socket buffer (EAGAIN) drops it, as the network might.
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) {
        _ = try Syscall.unlessWouldBlock { () throws(SystemCallError) in
            try Syscall.send(descriptor, bytes, to: address)
        }
    }

    /// Receives one datagram if one is waiting. Datagrams longer than `capacity` are reported
    /// with their true length (MSG_TRUNC) so the caller can count them as oversized.
    public func receive(capacity: Int = 2048) throws(SystemCallError) -> (
        bytes: [UInt8], length: Int, from: SocketAddress
    )? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let received = try Syscall.unlessWouldBlock { () throws(SystemCallError) in
            try Syscall.receive(descriptor, into: &buffer, flags: Int32(MSG_TRUNC))
        }
        guard let (count, sender) = received, let sender else { return nil }
        return (Array(buffer.prefix(min(count, capacity))), count, sender)
    }
}
