import Glibc
import Testing

@testable import PartyRadioNet

/// Sockets on loopback unicast only: multicast is exercised in the namespace integration tests.
@Suite struct UDPSocketTests {
    @Test func datagramsCrossLoopbackAndOversizeIsReported() throws {
        let a = try UDPSocket()
        let b = try UDPSocket()
        try a.bind(SocketAddress("127.0.0.1", port: 0)!)
        try b.bind(SocketAddress("127.0.0.1", port: 0)!)
        let bAddress = try b.localAddress()
        try a.send([1, 2, 3], to: bAddress)
        try a.send([UInt8](repeating: 7, count: 1500), to: bAddress)
        var got: [(bytes: [UInt8], length: Int, from: SocketAddress)] = []
        for _ in 0..<100 where got.count < 2 {
            if let datagram = try b.receive(capacity: 1300) { got.append(datagram) } else { usleep(2000) }
        }
        #expect(got.count == 2)
        #expect(got.first?.bytes == [1, 2, 3])
        #expect(got.first?.from == (try a.localAddress()))
        #expect(got.last?.length == 1500)
        #expect(got.last?.bytes.count == 1300)
        #expect(try b.receive() == nil)
    }

    @Test func addressesParseAndPrint() {
        #expect(SocketAddress("10.99.0.1", port: 5)?.description == "10.99.0.1:5")
        #expect(SocketAddress("10.99.0", port: 5) == nil)
        #expect(SocketAddress("::1", port: 5)?.description == "[::1]:5")
    }

    @Test func datagramsCrossIPv6Loopback() throws {
        let a = try UDPSocket(family: .ipv6)
        let b = try UDPSocket(family: .ipv6)
        try a.bind(SocketAddress("::1", port: 0)!)
        try b.bind(SocketAddress("::1", port: 0)!)
        try a.send([4, 5, 6], to: try b.localAddress())
        var got: (bytes: [UInt8], length: Int, from: SocketAddress)?
        for _ in 0..<100 where got == nil {
            got = try b.receive()
            if got == nil { usleep(2000) }
        }
        #expect(got?.bytes == [4, 5, 6])
        #expect(got?.from == (try a.localAddress()))
        #expect(got?.from.host == "::1" && got?.from.family == .ipv6)
        // An IPv6 socket is IPv6 only: it cannot reach an IPv4 address.
        #expect(throws: SystemCallError.self) { try a.send([1], to: SocketAddress("127.0.0.1", port: 9)!) }
    }

    @Test func unicastSocketsOpenOnePerFamilyOnOnePort() throws {
        let loopback = try NetworkInterface.choose("lo")
        #expect(loopback.families == [.ipv4, .ipv6])
        let node = try UnicastSockets(interface: loopback, port: 0)
        defer { node.close() }
        #expect(node.families == [.ipv4, .ipv6])
        for socket in node.sockets { #expect(try socket.localAddress().port == node.port) }
        let peers = try [UDPSocket(family: .ipv4), UDPSocket(family: .ipv6)]
        try peers[0].bind(SocketAddress("127.0.0.1", port: 0)!)
        try peers[1].bind(SocketAddress("::1", port: 0)!)
        // Each family's datagram leaves by that family's socket and is answered at the one port.
        for peer in peers {
            try node.send([9], to: try peer.localAddress())
            var heard: SocketAddress?
            for _ in 0..<100 where heard == nil {
                heard = try peer.receive()?.from
                if heard == nil { usleep(2000) }
            }
            #expect(heard?.family == peer.family && heard?.port == node.port)
        }
        let v4Only = NetworkInterface(
            name: "x", index: 1, addressNetworkOrder: 0x0100_007F, isLoopback: true, supportsMulticast: true,
            isUp: true)
        let single = try UnicastSockets(interface: v4Only, port: 0)
        defer { single.close() }
        #expect(single.families == [.ipv4])
        #expect(throws: SystemCallError.self) { try single.send([1], to: SocketAddress("::1", port: 9)!) }
    }

    @Test func interfaceChoiceExplainsItself() {
        #expect(throws: NetworkInterface.Problem.self) { try NetworkInterface.choose("no-such-if0") }
        let loopback = try? NetworkInterface.choose("lo")
        #expect(loopback?.isLoopback == true)
        #expect(NetworkInterface.Problem.notFound("x", available: ["eth0"]).description.contains("eth0"))
    }
}
