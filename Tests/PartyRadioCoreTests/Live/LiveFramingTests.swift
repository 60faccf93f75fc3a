import PartyRadioCore
import Testing

/// Live frames and repairs on the wire (docs/LIVE.md): the layouts restated byte by byte here, a
/// round trip, and every malformed, truncated or oversized body dropped with an error.
@Suite struct LiveFramingTests {
    struct Signer: PartyRadioCore.Signer {
        let publicKey = PublicKey(bytes: [UInt8](repeating: 3, count: 32))!
        func sign(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: Datagram.signatureSize) }
    }

    static let station = StationID(rawValue: 0x0102_0304_0506_0708)

    /// A datagram around `body` of `kind` (header by hand: magic, version, kind, ID, key, sequence).
    static func datagram(kind: UInt8, body: [UInt8]) -> [UInt8] {
        let header = [0x50, 0x52, 1, kind] + bigEndian(station.rawValue) + [UInt8](repeating: 3, count: 32)
        return header + [UInt8](repeating: 0, count: 8) + body + [UInt8](repeating: 0, count: 64)
    }

    static func frameBody(
        sequence: UInt64, time: Int64, delayMs: UInt16 = 60, codec: UInt8 = 1, duration: UInt8 = 4, payload: [UInt8]
    ) -> [UInt8] {
        bigEndian(sequence) + bigEndian(UInt64(bitPattern: time)) + bigEndian(delayMs) + [codec, duration]
            + bigEndian(UInt16(payload.count)) + payload
    }

    static func repairBody(first: UInt64, k: UInt8, m: UInt8, index: UInt8, shard: [UInt8]) -> [UInt8] {
        bigEndian(first) + [k, m, index] + bigEndian(UInt16(shard.count)) + shard
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    @Test func aFrameIsTheLayoutOfTheDoc() throws {
        let frame = LiveFrame(
            sequence: 0x0102_0304_0506_0708, firstSample: DJTime(ns: 1_765_000_000_123_456_789), duration: .ms10,
            payload: [0xAA, 0xBB, 0xCC])
        let bytes = try Datagram.encode(.liveFrame(frame), stationID: Self.station, sequence: 0, signer: Signer())
        let body = Self.frameBody(
            sequence: 0x0102_0304_0506_0708, time: 1_765_000_000_123_456_789, payload: [0xAA, 0xBB, 0xCC])
        #expect(bytes == Self.datagram(kind: 23, body: body))
        #expect(try Datagram.decode(bytes).message == .liveFrame(frame))
        #expect(bytes.count == 138 + 3)
        let slow = LiveFrame(sequence: 1, firstSample: DJTime(ns: 5), delayMs: 1500, duration: .ms20, payload: [1])
        let slowBytes = try Datagram.encode(.liveFrame(slow), stationID: Self.station, sequence: 0, signer: Signer())
        let slowBody = Self.frameBody(sequence: 1, time: 5, delayMs: 1500, duration: 8, payload: [1])
        #expect(slowBytes == Self.datagram(kind: 23, body: slowBody))
        #expect(try Datagram.decode(slowBytes).message == .liveFrame(slow))
    }

    @Test func aRepairIsTheLayoutOfTheDoc() throws {
        let shard = [UInt8](repeating: 0x5A, count: 20)
        let repair = LiveRepair(firstSequence: 40, dataCount: 4, parityCount: 2, parityIndex: 1, shard: shard)
        let bytes = try Datagram.encode(.liveRepair(repair), stationID: Self.station, sequence: 0, signer: Signer())
        #expect(bytes == Self.datagram(kind: 24, body: Self.repairBody(first: 40, k: 4, m: 2, index: 1, shard: shard)))
        #expect(try Datagram.decode(bytes).message == .liveRepair(repair))
    }

    @Test func aResendRequestIsTheLayoutOfTheDoc() throws {
        let request = LiveResend(firstSequence: 0x0A0B_0C0D_0E0F_1011, mask: 0x8000_0005)
        let bytes = try Datagram.encode(.liveResend(request), stationID: Self.station, sequence: 0, signer: Signer())
        let body = Self.bigEndian(UInt64(0x0A0B_0C0D_0E0F_1011)) + [0x80, 0x00, 0x00, 0x05]
        #expect(bytes == Self.datagram(kind: 25, body: body))
        #expect(try Datagram.decode(bytes).message == .liveResend(request))
        #expect(request.sequences == [0x0A0B_0C0D_0E0F_1011, 0x0A0B_0C0D_0E0F_1013, 0x0A0B_0C0D_0E0F_1011 + 31])
        // Nothing asked, and a span past the last number, are malformed; every cut is an error.
        #expect(Self.isMalformed(Self.datagram(kind: 25, body: Self.bigEndian(UInt64(7)) + [0, 0, 0, 0])))
        #expect(Self.isMalformed(Self.datagram(kind: 25, body: Self.bigEndian(UInt64.max - 30) + [0, 0, 0, 1])))
        #expect(!Self.isMalformed(Self.datagram(kind: 25, body: Self.bigEndian(UInt64.max - 31) + [0, 0, 0, 1])))
        for cut in 0..<body.count {
            #expect(throws: WireError.self) {
                try Datagram.decode(Self.datagram(kind: 25, body: Array(body.prefix(cut))))
            }
        }
        #expect(throws: WireError.trailingBytes(1)) { try Datagram.decode(Self.datagram(kind: 25, body: body + [0])) }
    }

    @Test("numbers to ask for become requests of at most 32 numbers each, every number in exactly one")
    func askingSplitsBySpan() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let base = UInt64.random(in: 0...1_000_000, using: &random)
            let numbers = Set(
                (0..<Int.random(in: 1...60, using: &random)).map { _ in base + UInt64.random(in: 0...100) })
            let requests = LiveResend.asking(for: Array(numbers) + Array(numbers))  // repeats ask once
            let asked = requests.flatMap(\.sequences)
            #expect(asked.sorted() == numbers.sorted() && Set(asked).count == asked.count)
            #expect(requests.allSatisfy { $0.mask & 1 == 1 && $0.mask != 0 })
        }
    }

    @Test func everyDurationAndTheLongestPacketRoundTrip() throws {
        for code: UInt8 in [1, 2, 4, 8] {
            let body = Self.frameBody(
                sequence: 1, time: -7, duration: code, payload: [UInt8](repeating: 1, count: 1000))
            let bytes = Self.datagram(kind: 23, body: body)
            #expect(bytes.count <= Datagram.maxSize)
            guard case .liveFrame(let frame) = try Datagram.decode(bytes).message else {
                Issue.record("not a frame")
                continue
            }
            #expect(frame.duration.ns == Int64(code) * 2_500_000)
        }
        let longest = Self.repairBody(first: 1, k: 16, m: 8, index: 7, shard: [UInt8](repeating: 2, count: 1014))
        #expect(Self.datagram(kind: 24, body: longest).count == 1143)
        #expect(throws: Never.self) { try Datagram.decode(Self.datagram(kind: 24, body: longest)) }
    }

    static let malformedFrames: [(String, [UInt8])] = [
        ("codec 0", frameBody(sequence: 1, time: 0, codec: 0, payload: [1])),
        ("codec 2", frameBody(sequence: 1, time: 0, codec: 2, payload: [1])),
        ("duration 0", frameBody(sequence: 1, time: 0, duration: 0, payload: [1])),
        ("duration 3", frameBody(sequence: 1, time: 0, duration: 3, payload: [1])),
        ("duration 16", frameBody(sequence: 1, time: 0, duration: 16, payload: [1])),
        ("empty packet", frameBody(sequence: 1, time: 0, payload: [])),
        ("delay 0", frameBody(sequence: 1, time: 0, delayMs: 0, payload: [1])),
        ("delay 5001 ms", frameBody(sequence: 1, time: 0, delayMs: 5001, payload: [1])),
        ("delay 65535 ms", frameBody(sequence: 1, time: 0, delayMs: .max, payload: [1])),
        ("1001-byte packet", frameBody(sequence: 1, time: 0, payload: [UInt8](repeating: 0, count: 1001))),
    ]

    static let malformedRepairs: [(String, [UInt8])] = [
        ("k 0", repairBody(first: 0, k: 0, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 15))),
        ("k 17", repairBody(first: 0, k: 17, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 15))),
        ("m 0", repairBody(first: 0, k: 4, m: 0, index: 0, shard: [UInt8](repeating: 0, count: 15))),
        ("m 9", repairBody(first: 0, k: 4, m: 9, index: 0, shard: [UInt8](repeating: 0, count: 15))),
        ("index m", repairBody(first: 0, k: 4, m: 2, index: 2, shard: [UInt8](repeating: 0, count: 15))),
        (
            "past the last number",
            repairBody(first: .max - 2, k: 4, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 15))
        ),
        ("14-byte shard", repairBody(first: 0, k: 4, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 14))),
        ("1015-byte shard", repairBody(first: 0, k: 4, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 1015))),
    ]

    @Test func malformedBodiesAreMalformed() {
        for (name, body) in Self.malformedFrames {
            #expect(throws: WireError.self, "\(name)") { try Datagram.decode(Self.datagram(kind: 23, body: body)) }
            #expect(Self.isMalformed(Self.datagram(kind: 23, body: body)), "\(name)")
        }
        for (name, body) in Self.malformedRepairs {
            #expect(Self.isMalformed(Self.datagram(kind: 24, body: body)), "\(name)")
        }
        // The last block that fits is fine.
        let last = Self.repairBody(first: .max - 3, k: 4, m: 1, index: 0, shard: [UInt8](repeating: 0, count: 15))
        #expect(!Self.isMalformed(Self.datagram(kind: 24, body: last)))
    }

    static func isMalformed(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try Datagram.decode(bytes)
            return false
        } catch {
            return error.counterName == "malformed" || error == .truncated
        }
    }

    @Test func everyTruncationAndTrailingByteIsAnError() {
        let frame = Self.frameBody(sequence: 9, time: 9, payload: [1, 2, 3, 4])
        let repair = Self.repairBody(first: 9, k: 2, m: 1, index: 0, shard: [UInt8](repeating: 7, count: 16))
        for (kind, body) in [(UInt8(23), frame), (24, repair)] {
            for cut in 0..<body.count {
                let bytes = Self.datagram(kind: kind, body: Array(body.prefix(cut)))
                #expect(throws: WireError.self, "kind \(kind) cut at \(cut)") { try Datagram.decode(bytes) }
            }
            let longer = Self.datagram(kind: kind, body: body + [0])
            #expect(throws: WireError.trailingBytes(1)) { try Datagram.decode(longer) }
            let oversized = Self.datagram(kind: kind, body: body + [UInt8](repeating: 0, count: 1200))
            #expect(throws: WireError.oversized(oversized.count)) { try Datagram.decode(oversized) }
        }
    }
}
