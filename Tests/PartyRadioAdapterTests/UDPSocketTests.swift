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
        #expect(SocketAddress("::1", port: 5) == nil)
    }

    @Test func interfaceChoiceExplainsItself() {
        #expect(throws: NetworkInterface.Problem.self) { try NetworkInterface.choose("no-such-if0") }
        let loopback = try? NetworkInterface.choose("lo")
        #expect(loopback?.isLoopback == true)
        #expect(NetworkInterface.Problem.notFound("x", available: ["eth0"]).description.contains("eth0"))
    }
}
