import Testing

@testable import PartyRadioNet

/// The kernel's neighbour table as rtnetlink hands it out: IP address → link-layer address.
@Suite struct NeighbourTableTests {
    /// One RTM_NEWNEIGH message as the kernel writes it (host byte order, 4-byte aligned).
    func message(family: UInt8, destination: [UInt8], linkLayer: [UInt8]?) -> [UInt8] {
        func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
            let length = 4 + value.count
            var bytes = le(UInt16(length)) + le(type) + value
            while bytes.count % 4 != 0 { bytes.append(0) }
            return bytes
        }
        var body: [UInt8] = [family, 0, 0, 0] + le(UInt32(2)) + le(UInt16(0x02)) + [0, 1]  // ndmsg
        body += attribute(1, destination)
        if let linkLayer { body += attribute(2, linkLayer) }
        return le(UInt32(16 + body.count)) + le(UInt16(28)) + le(UInt16(2)) + le(UInt32(1)) + le(UInt32(0)) + body
    }

    func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    let done: [UInt8] = [20, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    @Test func parsesADump() {
        let v6: [UInt8] = [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
        let dump =
            message(family: 2, destination: [10, 99, 0, 7], linkLayer: [2, 0x11, 0x22, 0x33, 0x44, 0x55])
            + message(family: 10, destination: v6, linkLayer: [2, 0x11, 0x22, 0x33, 0x44, 0x55])
            + message(family: 2, destination: [10, 99, 0, 8], linkLayer: nil)  // incomplete: no answer yet
            + message(family: 2, destination: [10, 99, 0, 9], linkLayer: [0, 0, 0, 0, 0, 0])
        var table: [[UInt8]: String] = [:]
        #expect(!NeighbourTable.parse(dump[...], into: &table))
        #expect(table == [[10, 99, 0, 7]: "02:11:22:33:44:55", v6: "02:11:22:33:44:55"])
        #expect(NeighbourTable.parse(done[...], into: &table))
        // A cut message ends the parse without a crash.
        var cut: [[UInt8]: String] = [:]
        #expect(NeighbourTable.parse(dump.prefix(30), into: &cut))
        #expect(cut.isEmpty)
    }

    @Test func readsAddressesAsTheTableKeysThem() {
        #expect(NeighbourTable.addressBytes("10.99.0.7") == [10, 99, 0, 7])
        #expect(NeighbourTable.addressBytes("::ffff:10.99.0.7") == [10, 99, 0, 7])
        #expect(NeighbourTable.addressBytes("fe80::1%eth0") == [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1])
        #expect(NeighbourTable.addressBytes("host.local") == nil)
    }

    @Test func readsTheKernelsTable() throws {
        // Whatever this machine's table holds: every entry an IPv4 or IPv6 address with a
        // link-layer address.
        let table = try NeighbourTable.read()
        for (address, link) in table {
            #expect(address.count == 4 || address.count == 16)
            #expect(!link.isEmpty)
        }
        #expect(NeighbourTable().linkLayerAddress(of: "127.0.0.1") == nil)
    }
}
