import Glibc

/// A node's unicast UDP endpoint: one ``UDPSocket`` per address family its interface has, all on
/// one port, each sending its family's multicast out of that interface.
///
/// IPv4-only and IPv6-only networks get one socket; a dual-stack one two, so the DNS-SD service
/// (one SRV port for both families) reaches the node over either. Owned by the node's thread.
public final class UnicastSockets {
    /// IPv4 first when there is one.
    public let sockets: [UDPSocket]
    /// The port every socket is bound to.
    public let port: UInt16

    /// Opens and binds one socket per family of `interface` on `port` (0: a free port, the same
    /// for every family), configured to send multicast on `interface`.
    /// - Parameter receiveBuffer: bytes asked for each socket's receive buffer (best effort).
    public init(interface: NetworkInterface, port: UInt16, receiveBuffer: Int32? = nil) throws(SystemCallError) {
        let families = interface.families.isEmpty ? [SocketAddress.Family.ipv4] : interface.families
        // With port 0 the first socket picks a free port; the next may find it taken in its own
        // family (another program's socket): then all start again on a new port, a few times.
        var attempt = 0
        while true {
            attempt += 1
            var opened: [UDPSocket] = []
            var bound = port
            do throws(SystemCallError) {
                for family in families {
                    let socket = try UDPSocket(family: family)
                    opened.append(socket)
                    try socket.bind(.any(port: bound, family: family))
                    bound = try socket.localAddress().port
                    try socket.configureMulticastSending(interface: interface)
                    if let receiveBuffer { try? socket.setReceiveBuffer(bytes: receiveBuffer) }
                }
                sockets = opened
                self.port = bound
                return
            } catch  where error.code == .addressInUse && port == 0 && opened.count > 1 && attempt < 8 {
                for socket in opened { socket.close() }
            } catch {
                for socket in opened { socket.close() }
                throw error
            }
        }
    }

    /// The socket of `family`, if the node has one.
    public func socket(for family: SocketAddress.Family) -> UDPSocket? {
        sockets.first { $0.family == family }
    }

    /// The families the node can send and receive on.
    public var families: [SocketAddress.Family] { sockets.map(\.family) }

    /// Sends one datagram from the socket of `address`'s family; `EAFNOSUPPORT` when there is none.
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) {
        guard let socket = socket(for: address.family) else {
            throw SystemCallError("sendto(\(address))", code: .familyNotSupported)
        }
        try socket.send(bytes, to: address)
    }

    public func close() { for socket in sockets { socket.close() } }
}
