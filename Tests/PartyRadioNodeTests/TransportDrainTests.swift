import Glibc
import PartyRadioNet
import Testing

@testable import PartyRadioNode

/// Loopback unicast only (multicast is the namespace tests' business).
@Suite struct TransportDrainTests {
    @Test("One turn takes at most drainLimit datagrams off a socket; the rest wait for the next")
    func aFloodLeavesTheLoopTurns() throws {
        let sender = try UDPSocket()
        let receiver = try UDPSocket()
        try sender.bind(SocketAddress("127.0.0.1", port: 0)!)
        try receiver.bind(SocketAddress("127.0.0.1", port: 0)!)
        try receiver.setReceiveBuffer(bytes: 4 << 20)
        let address = try receiver.localAddress()
        let total = Transport.drainLimit + 88
        for index in 0..<total { try sender.send([UInt8(index & 0xFF), UInt8(index >> 8)], to: address) }
        usleep(50_000)
        let clock = NodeClock()
        let first = Transport.drain(receiver, clock: clock)
        #expect(first.count == Transport.drainLimit)
        let second = Transport.drain(receiver, clock: clock)
        #expect(second.count == total - Transport.drainLimit)
        // In order, none lost or repeated across the turns.
        let indices = (first + second).map { Int($0.bytes[0]) | Int($0.bytes[1]) << 8 }
        #expect(indices == Array(0..<total))
        #expect(Transport.drain(receiver, clock: clock).isEmpty)
    }
}
