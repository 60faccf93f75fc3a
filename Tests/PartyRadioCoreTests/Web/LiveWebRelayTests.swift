import PartyRadioCore
import Testing

/// The live relay for listening pages (docs/WEB.md, "Live stations in the browser"): its records
/// byte for byte, the ring that drops a reader a whole ring behind, and the caps on streams.
@Suite struct LiveWebRelayTests {
    static func frame(_ sequence: UInt64, payload: [UInt8] = [0xAA, 0xBB, 0xCC]) -> LiveFrame {
        LiveFrame(
            sequence: sequence, firstSample: DJTime(ns: 1_796_000_000_000_000_000 + Int64(sequence) * 10_000_000),
            duration: .ms10, payload: payload)
    }

    /// Big-endian bytes of an integer, written out here rather than asked of the code under test.
    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    @Test("A frame record: type 1, the body's length, then the kind-23 body as on the wire")
    func frameRecord() {
        let frame = Self.frame(7)
        let record = LiveWebRecord.frame(frame)
        let body =
            Self.bigEndian(UInt64(7)) + Self.bigEndian(frame.firstSample.ns) + Self.bigEndian(UInt16(60)) + [1, 4]
            + Self.bigEndian(UInt16(3)) + [0xAA, 0xBB, 0xCC]
        #expect(record == [1] + Self.bigEndian(UInt16(body.count)) + body)
        #expect(LiveWebRecord.station(delayMs: 60) == [2, 0, 2, 0, 60])
        #expect(LiveWebRecord.keepAlive == [0, 0, 0])
    }

    @Test("A stream starts at the next frame and reads each frame once, in order")
    func readsInOrder() {
        var relay = LiveWebRelayState(limits: .init(ring: 8))
        relay.publish(LiveWebRecord.frame(Self.frame(1)))  // before the page came: not sent
        guard case .admitted(let cursor) = relay.admit(machine: "a") else {
            Issue.record("not admitted")
            return
        }
        #expect(relay.read(from: cursor) == .nothing)
        for n in 2...4 { relay.publish(LiveWebRecord.frame(Self.frame(UInt64(n)))) }
        let expected = (2...4).flatMap { LiveWebRecord.frame(Self.frame(UInt64($0))) }
        #expect(relay.read(from: cursor) == .records(expected, next: cursor + 3))
        #expect(relay.read(from: cursor + 3) == .nothing)
        // At most maxBytes at a time, but always one whole record.
        let one = LiveWebRecord.frame(Self.frame(2)).count
        #expect(
            relay.read(from: cursor, maxBytes: one + 1)
                == .records(LiveWebRecord.frame(Self.frame(2)), next: cursor + 1))
        #expect(relay.read(from: cursor, maxBytes: 1) == .records(LiveWebRecord.frame(Self.frame(2)), next: cursor + 1))
    }

    @Test("A reader a whole ring behind is dropped, never buffered for; one within it reads on")
    func slowReaderDropped() {
        var relay = LiveWebRelayState(limits: .init(ring: 8))
        guard case .admitted(let slow) = relay.admit(machine: "slow") else {
            Issue.record("not admitted")
            return
        }
        for n in 0..<8 { relay.publish(LiveWebRecord.frame(Self.frame(UInt64(n)))) }
        // Exactly a ring behind: still every record there.
        guard case .records(let bytes, let next) = relay.read(from: slow) else {
            Issue.record("a reader within the ring was not given its records")
            return
        }
        #expect(next == slow + 8)
        #expect(bytes == (0..<8).flatMap { LiveWebRecord.frame(Self.frame(UInt64($0))) })
        relay.publish(LiveWebRecord.frame(Self.frame(8)))
        #expect(relay.read(from: slow) == .behind, "a reader 9 records behind a ring of 8")
        #expect(
            relay.read(from: slow + 1)
                == .records(
                    Array(bytes.dropFirst(LiveWebRecord.frame(Self.frame(0)).count))
                        + LiveWebRecord.frame(Self.frame(8)), next: slow + 9))
    }

    @Test("At most `streams` in all and `perMachine` per machine; a stream that ends frees its place")
    func caps() {
        var relay = LiveWebRelayState(limits: .init(streams: 3, perMachine: 2))
        #expect(relay.admit(machine: "a") == .admitted(cursor: 0))
        #expect(relay.admit(machine: "a") == .admitted(cursor: 0))
        #expect(relay.admit(machine: "a") == .machineFull)
        #expect(relay.admit(machine: "b") == .admitted(cursor: 0))
        #expect(relay.admit(machine: "c") == .full)
        #expect(relay.openStreams == 3)
        relay.release(machine: "a")
        #expect(relay.admit(machine: "c") == .admitted(cursor: 0))
        relay.release(machine: "nobody")
        #expect(relay.openStreams == 3)
    }
}
