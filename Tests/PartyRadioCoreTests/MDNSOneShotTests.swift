import Testing

@testable import PartyRadioCore

@Suite struct MDNSOneShotTests {
    let name = MDNSOneShot.serviceInstance("Mem", type: "_partyradio._udp")!

    /// avahi-daemon's answer to a one-shot SRV question for `Mem._partyradio._udp.local`, as
    /// captured on the testbed: the SRV record (target `mem1.local`, compressed) and the target's A
    /// record along with it.
    static let srvReply: [UInt8] =
        [0x12, 0x34, 0x84, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x03] + Array("Mem".utf8)
        + [0x0B] + Array("_partyradio".utf8) + [0x04] + Array("_udp".utf8) + [0x05] + Array("local".utf8)
        + [
            0x00, 0x00, 0x21, 0x00, 0x01, 0xC0, 0x0C, 0x00, 0x21, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x0D, 0x00,
            0x00,
            0x00, 0x00, 0xB0, 0x3E, 0x04,
        ] + Array("mem1".utf8)
        + [0xC0, 0x21, 0xC0, 0x3E, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x04, 0x0A, 0x63, 0x0A, 0x01]

    /// Its answer to the TXT question (the strings in Avahi's order).
    static let txtReply: [UInt8] = {
        let strings = ["priv=0", "web=32847", "pk=B5BQv9QEZtU9Gqlgbbpszqq27rXr8pxesWmIYXovdrc", "v=1"]
        let data = strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        return [0x12, 0x34, 0x84, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x03] + Array("Mem".utf8)
            + [0x0B] + Array("_partyradio".utf8) + [0x04] + Array("_udp".utf8) + [0x05] + Array("local".utf8)
            + [
                0x00, 0x00, 0x10, 0x00, 0x01, 0xC0, 0x0C, 0x00, 0x10, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0A, 0x00,
                UInt8(data.count),
            ] + data
    }()

    @Test func aQuestionIsOneQuestionAskingForAUnicastAnswer() {
        let query = MDNSOneShot.query(id: 0x1234, name: name, type: .srv)
        #expect(Array(query.prefix(12)) == [0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(Array(query[12...16]) == [3] + Array("Mem".utf8) + [11])
        #expect(Array(query.suffix(5)) == [0, 0x00, 0x21, 0x80, 0x01])
        // A question parses as no reply (QR clear).
        #expect(MDNSOneShot.parse(query, id: 0x1234, name: name) == nil)
    }

    @Test func namesThatDNSCannotCarryAreNotAsked() {
        #expect(MDNSOneShot.serviceInstance("", type: "_partyradio._udp") == nil)
        #expect(MDNSOneShot.serviceInstance(String(repeating: "x", count: 64), type: "_partyradio._udp") == nil)
        #expect(MDNSOneShot.serviceInstance("a.b c", type: "_partyradio._udp")?.first == Array("a.b c".utf8))
    }

    @Test func avahisRepliesGiveTheStationsAddressPortAndTXT() throws {
        var records = try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: name))
        #expect(records.port == 45118)
        #expect(records.target == [Array("mem1".utf8), Array("local".utf8)])
        #expect(records.ipv4 == [[10, 99, 10, 1]])
        #expect(!records.isComplete)
        records.merge(try #require(MDNSOneShot.parse(Self.txtReply, id: 0x1234, name: name)))
        #expect(records.txt?.contains("v=1") == true)
        #expect(records.txt?.count == 4)
        #expect(records.isComplete)
    }

    @Test func namesCompareWithoutASCIICase() throws {
        let upper = MDNSOneShot.serviceInstance("MEM", type: "_PARTYRADIO._udp")!
        #expect(try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: upper)).port == 45118)
        let other = MDNSOneShot.serviceInstance("Mem2", type: "_partyradio._udp")!
        #expect(try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: other)).port == nil)
    }

    @Test func anotherQuerysReplyOrAnErrorIsNone() {
        #expect(MDNSOneShot.parse(Self.srvReply, id: 0x4321, name: name) == nil)
        var error = Self.srvReply
        error[3] = 0x03  // NXDOMAIN
        #expect(MDNSOneShot.parse(error, id: 0x1234, name: name) == nil)
    }

    /// The reply to the address question names no SRV: the addresses are the known target's.
    @Test func theTargetsAddressesFromAReplyOfTheirOwn() throws {
        let target = [Array("mem1".utf8), Array("local".utf8)]
        let other = MDNSOneShot.serviceInstance("Mem2", type: "_partyradio._udp")!
        let records = try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: other, knownTarget: target))
        #expect(records.port == nil && records.ipv4 == [[10, 99, 10, 1]])
        // Without a target known, nothing is read for an SRV that is not the instance's.
        #expect(try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: other)).ipv4.isEmpty)
        // The reply's own SRV target wins over the one known before.
        let stale = [Array("old".utf8), Array("local".utf8)]
        let own = try #require(MDNSOneShot.parse(Self.srvReply, id: 0x1234, name: name, knownTarget: stale))
        #expect(own.target == target && own.ipv4 == [[10, 99, 10, 1]])
    }

    @Test func compressionLoopsAndForwardPointersAreRejected() {
        // A pointer to itself, and one pointing forwards.
        var loop = Self.srvReply
        loop[39] = 0xC0
        loop[40] = 39
        #expect(MDNSOneShot.parse(loop, id: 0x1234, name: name) == nil)
        var forward = Self.srvReply
        forward[45] = 0x50
        #expect(MDNSOneShot.parse(forward, id: 0x1234, name: name) == nil)
    }

    /// Every truncation and every single-byte change of real replies: nil or records, never a
    /// crash, and nothing read beyond the message (the fuzzer's `dns` target goes further).
    @Test func malformedRepliesAreDroppedNotTrusted() {
        for reply in [Self.srvReply, Self.txtReply] {
            for length in 0..<reply.count {
                _ = MDNSOneShot.parse(Array(reply.prefix(length)), id: 0x1234, name: name)
                #expect(MDNSOneShot.parse(Array(reply.prefix(length)), id: 0x1234, name: name)?.isComplete != true)
            }
            for index in reply.indices {
                for value: UInt8 in [0x00, 0x3F, 0x40, 0xC0, 0xFF] {
                    var changed = reply
                    changed[index] = value
                    if let records = MDNSOneShot.parse(changed, id: 0x1234, name: name) {
                        #expect((records.txt ?? []).allSatisfy { $0.utf8.count <= 255 })
                        #expect(records.ipv4.allSatisfy { $0.count == 4 })
                    }
                }
            }
        }
    }
}
