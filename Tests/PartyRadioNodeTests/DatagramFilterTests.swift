import Testing

@testable import PartyRadioCore
@testable import PartyRadioNet
@testable import PartyRadioNode
@testable import PartyRadioSecurity

/// The datagram filter's acceptance rules, fed real signed bytes and checked with libsodium.
@Suite struct DatagramFilterTests {
    let dj = Identity.generate()
    let listener = Identity.generate()
    let mallory = Identity.generate()
    let from = PeerAddress(host: "10.99.0.9", port: 4000)
    let now = LocalTime(ns: 0)

    func transport(_ identity: Identity, station: StationID) throws -> Receiver { Receiver() }

    /// The filter with the old transport's call shape, so the rules read as before.
    final class Receiver {
        var filter = DatagramFilter(verifier: SodiumVerifier())
        var drops: DropCounters { filter.drops }
        func accept(bytes: [UInt8], length: Int, from: PeerAddress, policy: SenderPolicy, now: LocalTime) -> Inbound? {
            filter.accept(
                length > Datagram.maxSize ? bytes + [UInt8](repeating: 0, count: length - bytes.count) : bytes,
                from: from, at: now, policy: policy)
        }
    }

    func bytes(_ message: Message, by signer: Identity, station: StationID? = nil, sequence: UInt64 = 1) throws
        -> [UInt8]
    {
        try Datagram.encode(message, stationID: station ?? dj.stationID, sequence: sequence, signer: signer)
    }

    @Test func listenersAcceptOnlyTheirStationsSignedDJKinds() throws {
        let receiver = try transport(listener, station: dj.stationID)
        let policy = SenderPolicy.stations([dj.stationID: dj.publicKey])
        let goodbye = Message.goodbye(Goodbye(reason: "x"))
        #expect(
            receiver.accept(bytes: try bytes(goodbye, by: dj), length: 200, from: from, policy: policy, now: now) != nil
        )
        // Replayed: the same datagram again.
        #expect(
            receiver.accept(bytes: try bytes(goodbye, by: dj), length: 200, from: from, policy: policy, now: now) == nil
        )
        // Forged: Mallory's key, our station's ID.
        #expect(
            receiver.accept(
                bytes: try bytes(goodbye, by: mallory, sequence: 9), length: 200, from: from, policy: policy, now: now)
                == nil)
        // A forged track change: a snapshot signed by Mallory with the DJ's key written into the header.
        var forged = try bytes(
            .stateSnapshot(
                StateSnapshot(
                    stationName: "Evil", nowPlaying: nil, anchor: .paused(at: 0, djTime: DJTime(ns: 0)), tally: Tally(),
                    listenerCount: 0,
                    queueLength: 0, queueIndex: 0, sentAtNs: 0)), by: mallory, sequence: 10)
        forged.replaceSubrange(12..<44, with: dj.publicKey.bytes)
        #expect(receiver.accept(bytes: forged, length: forged.count, from: from, policy: policy, now: now) == nil)
        // Another station's datagram, and a listener kind.
        let other = Identity.generate()
        #expect(
            receiver.accept(
                bytes: try bytes(goodbye, by: other, station: other.stationID), length: 200, from: from, policy: policy,
                now: now) == nil)
        #expect(
            receiver.accept(
                bytes: try bytes(.query(Query()), by: dj, sequence: 11), length: 200, from: from, policy: policy,
                now: now) == nil)
        #expect(
            receiver.drops.counts == ["replayed": 1, "bad_signature": 2, "wrong_station": 1, "unexpected_sender": 1])
    }

    @Test func theDJAcceptsSignedListenerKindsForItsStationOnly() throws {
        let receiver = try transport(dj, station: dj.stationID)
        let policy = SenderPolicy.listenersOf(dj.stationID)
        let vote = Message.vote(Vote(trackID: "t", choice: .up))
        #expect(
            receiver.accept(bytes: try bytes(vote, by: listener), length: 200, from: from, policy: policy, now: now)
                != nil)
        var tampered = try bytes(vote, by: listener, sequence: 2)
        tampered[MessageHeader.size + 1] ^= 1
        #expect(receiver.accept(bytes: tampered, length: tampered.count, from: from, policy: policy, now: now) == nil)
        #expect(
            receiver.accept(
                bytes: try bytes(.goodbye(Goodbye(reason: "")), by: listener, sequence: 3), length: 200, from: from,
                policy: policy, now: now) == nil)
        #expect(receiver.accept(bytes: [1, 2, 3], length: 3, from: from, policy: policy, now: now) == nil)
        #expect(receiver.accept(bytes: [], length: 5000, from: from, policy: policy, now: now) == nil)
        #expect(receiver.drops.total == 4)
        #expect(receiver.drops.counts["oversized"] == 1)
    }

    @Test func randomDatagramsAreDroppedAndCounted() throws {
        let receiver = try transport(dj, station: dj.stationID)
        var state: UInt64 = 99
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for round in 0..<3_000 {
            var datagram = (0..<Int(next() % 600)).map { _ in UInt8(truncatingIfNeeded: next()) }
            if round % 2 == 0, datagram.count > 12 {
                datagram.replaceSubrange(0..<4, with: [0x50, 0x52, 1, UInt8(next() % 10)])
            }
            _ = receiver.accept(
                bytes: datagram, length: datagram.count, from: from, policy: .listenersOf(dj.stationID), now: now)
        }
        #expect(receiver.drops.total == 3_000)
    }
}
