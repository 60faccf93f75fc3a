import Glibc
import PartyRadioCore
import Testing

@testable import PartyRadioNet

/// The neighbour table: rtnetlink's dump parsed as the kernel lays it out (linux/neighbour.h), the
/// on-link rule, and a real read (the loopback interface, which has no neighbours).
@Suite struct NeighbourTableTests {
    /// One `RTM_NEWNEIGH` message: `nlmsghdr`, `ndmsg`, then `NDA_DST` and `NDA_LLADDR`.
    static func neighbour(
        sequence: UInt32, index: Int32, state: UInt16, destination: [UInt8], linkLayer: [UInt8]?
    ) -> [UInt8] {
        var body: [UInt8] = []
        func put<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8]) {
            withUnsafeBytes(of: value) { bytes += $0 }
        }
        body += [destination.count == 4 ? 2 : 10, 0, 0, 0]  // family, padding
        put(index, into: &body)
        put(state, into: &body)
        body += [0, 1]  // flags, type
        for (type, value) in [(UInt16(1), destination), (UInt16(2), linkLayer)] {
            guard let value else { continue }
            put(UInt16(4 + value.count), into: &body)
            put(type, into: &body)
            body += value
            while body.count % 4 != 0 { body.append(0) }
        }
        var message: [UInt8] = []
        put(UInt32(16 + body.count), into: &message)
        put(UInt16(28), into: &message)
        put(UInt16(2), into: &message)  // NLM_F_MULTI
        put(sequence, into: &message)
        put(UInt32(0), into: &message)
        return message + body
    }

    static func done(sequence: UInt32) -> [UInt8] {
        var message: [UInt8] = []
        for value in [UInt32(20)] { withUnsafeBytes(of: value) { message += $0 } }
        withUnsafeBytes(of: UInt16(3)) { message += $0 }
        withUnsafeBytes(of: UInt16(2)) { message += $0 }
        withUnsafeBytes(of: sequence) { message += $0 }
        withUnsafeBytes(of: UInt32(0)) { message += $0 }
        return message + [0, 0, 0, 0]
    }

    @Test func aDumpGivesEachAddressItsLinkLayerAddressOnTheInterfaceOnly() {
        let mac: [UInt8] = [0x02, 0xAB, 0x00, 0x00, 0x00, 0x66]
        let dump =
            Self.neighbour(sequence: 7, index: 3, state: 0x02, destination: [10, 99, 0, 101], linkLayer: mac)
            + Self.neighbour(sequence: 7, index: 3, state: 0x04, destination: [10, 99, 0, 102], linkLayer: mac)
            // Another interface, an incomplete entry, a failed one, another dump's message.
            + Self.neighbour(sequence: 7, index: 4, state: 0x02, destination: [10, 99, 0, 103], linkLayer: mac)
            + Self.neighbour(sequence: 7, index: 3, state: 0x01, destination: [10, 99, 0, 104], linkLayer: nil)
            + Self.neighbour(sequence: 7, index: 3, state: 0x20, destination: [10, 99, 0, 105], linkLayer: mac)
            + Self.neighbour(sequence: 8, index: 3, state: 0x02, destination: [10, 99, 0, 106], linkLayer: mac)
            + Self.neighbour(
                sequence: 7, index: 3, state: 0x08, destination: [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [9],
                linkLayer: mac)
        let (entries, done) = NeighbourTable.parse(dump, sequence: 7, interfaceIndex: 3)
        #expect(!done)
        #expect(entries.count == 3)
        #expect(entries[[10, 99, 0, 101]] == "02:ab:00:00:00:66" && entries[[10, 99, 0, 102]] == "02:ab:00:00:00:66")
        #expect(entries[[0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [9]] == "02:ab:00:00:00:66")
        #expect(NeighbourTable.parse(Self.done(sequence: 7), sequence: 7, interfaceIndex: 3).done)
        // A cut message ends the part without a crash.
        #expect(NeighbourTable.parse(Array(dump.prefix(30)), sequence: 7, interfaceIndex: 3).entries.isEmpty)
    }

    @Test func addressesAreKeyedByTheirBytesAndOnLinkByThePrefix() {
        #expect(NeighbourTable.key("10.99.0.7") == [10, 99, 0, 7])
        #expect(NeighbourTable.key("::ffff:10.99.0.7") == [10, 99, 0, 7], "an IPv4-mapped address is its IPv4 one")
        #expect(NeighbourTable.key("fd99::7")?.count == 16 && NeighbourTable.key("not an address") == nil)
        let prefixes: [(address: [UInt8], mask: [UInt8])] = [([10, 99, 0, 1], [255, 255, 255, 0])]
        #expect(NeighbourTable.onLink([10, 99, 0, 200], prefixes))
        #expect(!NeighbourTable.onLink([10, 99, 1, 200], prefixes), "beyond a router: its address stands for it")
        #expect(NeighbourTable.onLink(NeighbourTable.key("fe80::1")!, []), "link-local IPv6 is always on the link")
    }

    @Test func theLoopbackInterfaceHasNoNeighbours() throws {
        let loopback = try #require(NetworkInterface.all().first { $0.isLoopback })
        let table = NeighbourTable(interface: loopback)
        // Its own address stands for its machine; nothing is probed.
        let (machine, probe) = table.lookUp("127.0.0.1")
        #expect(machine == .address("127.0.0.1") && !probe)
        #expect(table.machine(of: "not an address") == .address("not an address"))
    }
}
