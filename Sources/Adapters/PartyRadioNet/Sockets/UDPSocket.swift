import Glibc
import PartyRadioCore

/// A non-blocking IPv4 UDP socket with the multicast options partyradio needs.
///
/// Owns its descriptor: ``close()`` releases it. Methods are called from one thread (the
/// node's loop), so the class holds no lock; it is `@unchecked Sendable` only so that the
/// loop can be started on another thread.
public final class UDPSocket: @unchecked Sendable {
    public let descriptor: Int32
    private var closed = false

    public init() throws(SystemCallError) {
        descriptor = try syscall("socket") { socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    deinit { close() }

    public func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }

    private func setOption<T: BitwiseCopyable>(_ level: Int32, _ name: Int32, _ value: T, _ label: String)
        throws(SystemCallError)
    {
        try syscall(label) {
            withUnsafeBytes(of: value) { setsockopt(descriptor, level, name, $0.baseAddress, socklen_t($0.count)) }
        }
    }

    /// Lets several sockets on one host bind the same group and port (one per process).
    public func allowAddressReuse() throws(SystemCallError) {
        try setOption(SOL_SOCKET, SO_REUSEADDR, Int32(1), "setsockopt(SO_REUSEADDR)")
    }

    public func bind(_ address: SocketAddress) throws(SystemCallError) {
        var raw = address.raw
        try syscall("bind") {
            withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The address the socket is bound to (for the port the kernel picked).
    public func localAddress() throws(SystemCallError) -> SocketAddress {
        var raw = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try syscall("getsockname") {
            withUnsafeMutablePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
        }
        return SocketAddress(raw)
    }

    /// Sends multicast out of `interface` only, with TTL 1 so it never crosses a router,
    /// and loops it back so other processes on this host hear it too.
    public func configureMulticastSending(interface: NetworkInterface) throws(SystemCallError) {
        var request = ip_mreqn()
        request.imr_ifindex = interface.index
        request.imr_address.s_addr = interface.addressNetworkOrder
        try setOption(Int32(IPPROTO_IP), IP_MULTICAST_IF, request, "setsockopt(IP_MULTICAST_IF)")
        try setOption(Int32(IPPROTO_IP), IP_MULTICAST_TTL, UInt8(1), "setsockopt(IP_MULTICAST_TTL)")
        try setOption(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, UInt8(1), "setsockopt(IP_MULTICAST_LOOP)")
    }

    /// Joins `group` on `interface`.
    public func join(_ group: MulticastGroup, interface: NetworkInterface) throws(SystemCallError) {
        guard let groupAddress = SocketAddress(group.addressString, port: group.port) else {
            throw SystemCallError("inet_pton", code: EINVAL)
        }
        var request = ip_mreqn()
        request.imr_multiaddr.s_addr = groupAddress.addressNetworkOrder
        request.imr_address.s_addr = interface.addressNetworkOrder
        request.imr_ifindex = interface.index
        try setOption(Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, request, "setsockopt(IP_ADD_MEMBERSHIP)")
        // Only datagrams for groups this socket joined, not every group the host joined.
        try setOption(Int32(IPPROTO_IP), IP_MULTICAST_ALL, Int32(0), "setsockopt(IP_MULTICAST_ALL)")
    }

    /// Sends one datagram. A full socket buffer (EAGAIN) drops it, as the network might.
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) {
        var raw = address.raw
        let result = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if result < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { throw SystemCallError("sendto") }
    }

    /// Receives one datagram if one is waiting. Datagrams longer than `capacity` are reported
    /// with their true length (MSG_TRUNC) so the caller can count them as oversized.
    public func receive(capacity: Int = 2048) throws(SystemCallError) -> (bytes: [UInt8], length: Int, from: SocketAddress)? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var raw = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), $0, &length)
                }
            }
        }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return nil }
            throw SystemCallError("recvfrom")
        }
        return (Array(buffer.prefix(min(count, capacity))), count, SocketAddress(raw))
    }
}
