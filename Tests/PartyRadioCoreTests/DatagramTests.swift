import Testing

@testable import PartyRadioCore

@Suite struct DatagramTests {
    let station = StationID(rawValue: 0x0123_4567_89AB_CDEF)

    @Test func everyKindRoundTrips() throws {
        #expect(Set(Samples.messages.map(\.kind)) == Set(MessageKind.allCases))
        for (index, message) in (Samples.messages + Samples.withOptionalEnds).enumerated() {
            let bytes = try Datagram.encode(message, stationID: station, sequence: UInt64(index), signer: FakeSigner(7))
            let decoded = try Datagram.decode(bytes)
            #expect(decoded.message == message)
            #expect(decoded.header.stationID == station)
            #expect(decoded.header.sequence == UInt64(index))
            #expect(decoded.header.sender == FakeSigner(7).publicKey)
            // The cookie challenge alone goes unsigned (docs/PROTOCOL.md, "Admission cookies").
            #expect(
                decoded.signature == (message.kind.isUnauthenticated ? [] : FakeSigner(7).sign(decoded.signedBytes)))
            #expect(decoded.signedBytes + decoded.signature == bytes)
        }
    }

    @Test func headerLayoutMatchesTheSpec() throws {
        let bytes = try Datagram.encode(
            .heartbeat(Heartbeat()), stationID: station, sequence: 0x0102, signer: FakeSigner(9))
        #expect(bytes.count == MessageHeader.size + Datagram.signatureSize)
        #expect(Array(bytes[0..<4]) == [0x50, 0x52, 1, MessageKind.heartbeat.rawValue])
        #expect(Array(bytes[4..<12]) == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        #expect(Array(bytes[12..<44]) == [UInt8](repeating: 9, count: 32))
        #expect(Array(bytes[44..<52]) == [0, 0, 0, 0, 0, 0, 0x01, 0x02])
    }

    @Test func oversizedFieldsAreCutToFitOneDatagram() throws {
        let bytes = try Datagram.encode(
            .stateSnapshot(Samples.snapshot(Samples.longTrack)), stationID: station, sequence: 1, signer: FakeSigner(1))
        #expect(bytes.count <= Datagram.maxSize)
        guard case .stateSnapshot(let decoded) = try Datagram.decode(bytes).message else {
            Issue.record("not a snapshot")
            return
        }
        #expect(decoded.nowPlaying?.title.utf8.count ?? 0 <= StateSnapshot.Limit.text)
        #expect(decoded.nowPlaying?.title.allSatisfy { $0 == "é" } == true)
        #expect(decoded.nowPlaying?.artist.allSatisfy { $0 == "🎸" } == true)
    }

    /// Regression: the source's u16 prefix once said 400 while a cut inside a multi-byte
    /// character wrote 399 bytes, so every listener dropped the snapshot as malformed.
    @Test func cutsInsideMultiByteCharactersRoundTrip() throws {
        // `limit - 1` ASCII bytes, then characters of 2, 3 or 4 bytes (or a 3-byte cluster):
        // the limit falls inside the first of them, so the field comes out one byte short.
        func straddling(_ limit: Int, _ character: Character, prefix: String = "") -> String {
            let filler = String(repeating: "a", count: limit - 1 - prefix.utf8.count)
            return prefix + filler + String(repeating: character, count: 8)
        }
        let limit = StateSnapshot.Limit.self
        let track = Track(
            id: straddling(limit.trackID, "é"), title: straddling(limit.text, "中"),
            artist: straddling(limit.text, "🎸"), album: straddling(limit.text, "e\u{301}"), durationMs: 1,
            source: straddling(limit.source, "é", prefix: "http://10.0.0.1:8000/media/"))
        var snapshot = Samples.snapshot(track)
        snapshot.stationName = straddling(limit.name, "ß")

        let bytes = try Datagram.encode(
            .stateSnapshot(snapshot), stationID: station, sequence: 1, signer: FakeSigner(1))
        #expect(bytes.count <= Datagram.maxSize)
        guard case .stateSnapshot(let decoded) = try Datagram.decode(bytes).message else {
            Issue.record("not a snapshot")
            return
        }
        let cut = Track(
            id: track.id.utf8Prefix(maxBytes: limit.trackID), title: track.title.utf8Prefix(maxBytes: limit.text),
            artist: track.artist.utf8Prefix(maxBytes: limit.text), album: track.album.utf8Prefix(maxBytes: limit.text),
            durationMs: 1, source: track.source.utf8Prefix(maxBytes: limit.source))
        #expect(decoded.nowPlaying == cut)
        #expect(decoded.stationName == snapshot.stationName.utf8Prefix(maxBytes: limit.name))
        #expect(decoded.stationName.utf8.count == limit.name - 1)
        #expect(decoded.nowPlaying?.id.utf8.count == limit.trackID - 1)
        #expect(decoded.nowPlaying?.title.utf8.count == limit.text - 1)
        #expect(decoded.nowPlaying?.artist.utf8.count == limit.text - 1)
        #expect(decoded.nowPlaying?.album.utf8.count == limit.text - 1)
        #expect(decoded.nowPlaying?.source.utf8.count == limit.source - 1)
    }

    /// docs/PROTOCOL.md: every field at its limit makes a 1120-byte snapshot.
    @Test func aSnapshotWithEveryFieldAtItsLimitFits() throws {
        let limit = StateSnapshot.Limit.self
        func full(_ count: Int) -> String { String(repeating: "x", count: count) }
        var snapshot = Samples.snapshot(
            Track(
                id: full(limit.trackID), title: full(limit.text), artist: full(limit.text), album: full(limit.text),
                durationMs: .max, source: full(limit.source)))
        snapshot.stationName = full(limit.name)
        let bytes = try Datagram.encode(
            .stateSnapshot(snapshot), stationID: station, sequence: 1, signer: FakeSigner(1))
        #expect(bytes.count == 1120)
        #expect(try Datagram.decode(bytes).message == .stateSnapshot(snapshot))
    }

    @Test func longStringsCarryTheLengthOfTheBytesWritten() throws {
        var writer = ByteWriter()
        writer.writeLongString("ab🎸", maxBytes: 4)
        #expect(writer.bytes == [0, 2, 0x61, 0x62])
        var reader = ByteReader(writer.bytes)
        #expect(try reader.readLongString(maxBytes: 4) == "ab")
        #expect(reader.remaining == 0)

        var long = ByteWriter()
        long.writeLongString("abc")
        var strict = ByteReader(long.bytes)
        #expect(throws: WireError.self) { try strict.readLongString(maxBytes: 2) }
    }

    @Test func everyTruncationOfEveryMessageIsRejected() throws {
        for message in Samples.messages {
            let bytes = try Datagram.encode(message, stationID: station, sequence: 5, signer: FakeSigner(3))
            for length in 0..<bytes.count {
                #expect(throws: WireError.self) { try Datagram.decode(Array(bytes.prefix(length))) }
            }
        }
    }

    @Test func unknownVersionsAndKindsAreReportedAsSuch() throws {
        var bytes = try Datagram.encode(.query(Query()), stationID: station, sequence: 1, signer: FakeSigner(3))
        bytes[2] = 2
        #expect(throws: WireError.unknownVersion(2)) { try Datagram.decode(bytes) }
        bytes[2] = 1
        bytes[3] = 200
        #expect(throws: WireError.unknownKind(200)) { try Datagram.decode(bytes) }
        bytes[0] = 0
        #expect(throws: WireError.badMagic) { try Datagram.decode(bytes) }
    }

    @Test func oversizedAndTrailingBytesAreRejected() throws {
        #expect(throws: WireError.oversized(1201)) { try Datagram.decode([UInt8](repeating: 0x50, count: 1201)) }
        let bytes = try Datagram.encode(
            .vote(Vote(trackID: "1", choice: .up)), stationID: station, sequence: 1, signer: FakeSigner(3))
        // An extra byte inside the signed part shifts the body: trailing bytes or a bad field, never success.
        var padded = Array(bytes.dropLast(64)) + [0] + Array(bytes.suffix(64))
        #expect(throws: WireError.self) { try Datagram.decode(padded) }
        padded = bytes
        padded[MessageHeader.size + 2] = 9  // vote choice 9 does not exist
        #expect(throws: WireError.self) { try Datagram.decode(padded) }
    }

    /// Each field of the request kinds (16–20) that has a closed set of values, set to one outside it.
    @Test func requestKindsWithAnOutOfRangeFieldAreMalformed() throws {
        let body = MessageHeader.size
        let cases: [(Message, Int, UInt8)] = [
            (.requestSend(RequestSend(requestID: 1, name: "Bo", wanted: .library("x"))), body + 8 + 3, 2),
            (.requestAck(RequestAck(requestID: 1, status: .queued)), body + 8, UInt8(RequestAck.Status.allCases.count)),
            (.requestVote(RequestVote(queueID: 1, choice: .up)), body + 4, 3),
            (
                .requestVoteAck(RequestVoteAck(voteSequence: 1, queueID: 1, status: .counted)), body + 12,
                UInt8(RequestVoteAck.Status.allCases.count)
            ),
            (.requestVoteAck(RequestVoteAck(voteSequence: 1, queueID: 1, status: .counted)), body + 13, 3),
            (.queueList(QueueList(mode: .open, total: 0, entries: [])), body, 3),
            (
                .queueList(QueueList(mode: .open, total: 0, entries: [])), body + 5,
                UInt8(QueueList.Limit.maxEntries + 1)
            ),
            (
                .queueList(
                    QueueList(
                        mode: .off, total: 1,
                        entries: [
                            QueueList.Entry(
                                queueID: 1, trackID: "", title: "", artist: "", requester: "", tally: Tally(),
                                awaitingApproval: false)
                        ])), body + 6 + 4 + 4 + 8, 2
            ),
        ]
        for (message, offset, value) in cases {
            var bytes = try Datagram.encode(message, stationID: station, sequence: 1, signer: FakeSigner(3))
            #expect(throws: Never.self) { try Datagram.decode(bytes) }
            bytes[offset] = value
            #expect(throws: WireError.self, "\(message.kind) at \(offset)") { try Datagram.decode(bytes) }
        }
    }

    @Test func randomBytesNeverCrash() {
        var generator = SeededGenerator(seed: 2024)
        var decoded = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...1300, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length > 4 && Bool.random(using: &generator) {
                bytes[0] = 0x50
                bytes[1] = 0x52
                bytes[2] = 1
                bytes[3] = UInt8.random(in: 0...UInt8(MessageKind.allCases.count + 1), using: &generator)
            }
            if (try? Datagram.decode(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded < 20_000)
    }

    @Test func mutatedValidDatagramsNeverCrash() throws {
        var generator = SeededGenerator(seed: 77)
        for message in Samples.messages + Samples.withOptionalEnds {
            let bytes = try Datagram.encode(message, stationID: station, sequence: 5, signer: FakeSigner(3))
            for _ in 0..<2_000 {
                var mutated = bytes
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                _ = try? Datagram.decode(mutated)
            }
        }
    }

    @Test func dropCountersCountByReason() {
        var counters = DropCounters()
        counters.record(.truncated)
        counters.record(.truncated)
        counters.record(.unknownKind(9))
        counters.record(.malformed("x"))
        counters.record(.trailingBytes(1))
        #expect(counters.counts == ["truncated": 2, "unknown_kind": 1, "malformed": 2])
        #expect(counters.total == 5)
    }
}
