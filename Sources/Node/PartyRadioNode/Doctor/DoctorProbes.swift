import Glibc
import PartyRadioCore
import PartyRadioNet

/// What `partyradio doctor` asks of this machine: each probe does the real I/O once and returns
/// what it saw; the CLI judges it.
public enum DoctorProbes {
    /// A probe that could not get what it wanted, in one sentence.
    public struct Failure: Error, Equatable, Sendable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    /// The interface `--interface` names (nil: the default route's), or why there is none.
    public static func interface(_ name: String?) -> Result<NetworkInterface, Failure> {
        do { return .success(try NetworkInterface.choose(name)) } catch { return .failure(Failure(error.description)) }
    }

    /// Connects to avahi-daemon over D-Bus and disconnects: nil when it answered, else its error.
    public static func avahi(interface: NetworkInterface) -> String? {
        do {
            let session = try AvahiSession(interfaceIndex: interface.index, families: interface.families) { _ in }
            _ = session
            return nil
        } catch { return error.message }
    }

    /// The multicast self-test: joins a test group on `interface`, sends one datagram to it (TTL 1,
    /// looped back, out of `interface` only: it never leaves the link) and waits for it.
    /// - Returns: whether it came back and after how many milliseconds; throws what failed.
    public static func multicast(interface: NetworkInterface, timeoutMs: Int) throws(SystemCallError) -> (
        heard: Bool, ms: Int
    ) {
        // An administratively scoped group, port from the process ID: two doctors do not hear each other.
        let port = UInt16(40_000 + Int(getpid()) % 20_000)
        // IPv4 where the interface has it, else the group's IPv6 twin (ff12::5052:4d4d).
        let group = MulticastGroup(address: (239, 255, 77, 77), port: port)
        let family = interface.families.first ?? .ipv4
        let socket = try UDPSocket(family: family)
        defer { socket.close() }
        try socket.allowAddressReuse()
        try socket.bind(.any(port: port, family: family))
        try socket.join(group, interface: interface)
        try socket.configureMulticastSending(interface: interface)
        let token = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let start = ContinuousClock.now
        try socket.send(
            Array("partyradio-doctor".utf8) + token,
            to: SocketAddress(group, family: family, scope: UInt32(interface.index)))
        while true {
            let elapsed = Int((ContinuousClock.now - start) / .milliseconds(1))
            if let datagram = try socket.receive(), datagram.bytes.suffix(16).elementsEqual(token) {
                return (true, elapsed)
            }
            if elapsed >= timeoutMs { return (false, elapsed) }
            usleep(5_000)
        }
    }
}
