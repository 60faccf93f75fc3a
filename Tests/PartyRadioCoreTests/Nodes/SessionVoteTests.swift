import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Votes authenticated by a session MAC (docs/PROTOCOL.md, "Session MAC"), with the checksum
/// stand-ins: the DJ takes them with every rule a signed vote meets, and refuses and counts a
/// forged one. The real key exchange and MAC are tested in `SessionMACTests`.
@Suite struct SessionVoteTests {
    let id = Fixture.stationID
    let djKey = testKey(Fixture.djKeySeed)

    func started(sessions: Bool = true, unusable: Set<PublicKey> = [], seal: (any StationSeal)? = nil) -> DJMachine {
        var configuration = Fixture.djConfiguration()
        configuration.advert.takesSessionVotes = sessions
        var dj = DJMachine(
            configuration: configuration,
            verifier: ChecksumVerifier(seal: seal, sessionOwner: sessions ? djKey : nil, unusableKeys: unusable),
            now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    /// `message` from `peer` ending in its session MAC (made with `stationKey`, the DJ's unless
    /// told), with the peer's next sequence number.
    func macBytes(_ message: Message, from peer: inout Peer, stationKey: PublicKey? = nil) -> [UInt8] {
        peer.sequence += 1
        let session = ChecksumSessionSigner(publicKey: peer.publicKey, stationKey: stationKey ?? djKey)
        return try! Datagram.encode(
            message, stationID: id, sequence: peer.sequence, session: session, fallback: peer.signer)
    }

    func acks(_ effects: [Effect], to peer: Peer) -> [VoteAck] {
        effects.sent.compactMap {
            if case .voteAck(let ack) = $0.message, $0.to == .peer(peer.address) { ack } else { nil }
        }
    }

    let up = Message.vote(Vote(trackID: "t0", choice: .up))

    @Test func aListenersMACVoteIsCountedWithItsKeyMadeWhenItJoined() throws {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        #expect(!dj.filter.hasSession(for: guest.publicKey))
        _ = dj.handle(guest.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 10))
        #expect(dj.filter.hasSession(for: guest.publicKey), "made as the listener joined, off the vote's path")
        let bytes = macBytes(up, from: &guest)
        #expect(try Datagram.decode(bytes).header.authentication == .session)
        #expect(bytes.count == MessageHeader.size + 3 + 1 + Datagram.sessionMACSize)
        let out = dj.handle(.datagram(bytes, from: guest.address), at: at(ms: 20))
        #expect(acks(out, to: guest).map(\.status) == [.counted])
        #expect(dj.engine.votes.tally == Tally(up: 1) && dj.engine.votes.choice(of: guest.publicKey) == .up)
        // Its replay is dropped like a signed vote's.
        let replay = dj.handle(.datagram(bytes, from: guest.address), at: at(ms: 30))
        #expect(replay.sent.isEmpty && dj.filter.drops.counts == ["replayed": 1])
        // A signed vote from the same key changes the same vote: one guest, one vote.
        let signed = dj.handle(guest.send(.vote(Vote(trackID: "t0", choice: .down)), station: id), at: at(ms: 40))
        #expect(acks(signed, to: guest).map(\.tally) == [Tally(down: 1)])
    }

    @Test func forgedMACsAreDroppedAndCounted() {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        _ = dj.handle(guest.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 10))
        // A MAC under another key (a forger that knows the guest's public key, not the session key).
        var forged = macBytes(up, from: &guest, stationKey: testKey(0x66))
        #expect(acks(dj.handle(.datagram(forged, from: guest.address), at: at(ms: 20)), to: guest).isEmpty)
        // The right MAC over changed bytes: the choice flipped after the MAC was made.
        forged = macBytes(up, from: &guest)
        forged[forged.count - Datagram.sessionMACSize - 1] = 2  // down
        #expect(acks(dj.handle(.datagram(forged, from: guest.address), at: at(ms: 30)), to: guest).isEmpty)
        // A signed vote with the flag set: its signature read as body and MAC does not even parse.
        var flagged = guest.bytes(up, station: id)
        flagged[3] |= 0x80
        #expect(acks(dj.handle(.datagram(flagged, from: guest.address), at: at(ms: 40)), to: guest).isEmpty)
        #expect(dj.filter.drops.counts == ["bad_mac": 2, "malformed": 1])
        #expect(dj.engine.votes.tally == Tally())
        // And the genuine one still counts: the forgeries used none of its sequence numbers.
        let genuine = dj.handle(.datagram(macBytes(up, from: &guest), from: guest.address), at: at(ms: 50))
        #expect(acks(genuine, to: guest).map(\.status) == [.counted])
    }

    @Test func anUnknownGuestsMACVoteHasItsKeyMadeOnTheSpotUnderTheGate() {
        var dj = started(unusable: [testKey(9)])
        var stranger = Peer("10.0.0.8", key: 8)
        let out = dj.handle(.datagram(macBytes(up, from: &stranger), from: stranger.address), at: at(ms: 10))
        #expect(acks(out, to: stranger).map(\.status) == [.counted])
        #expect(dj.filter.hasSession(for: stranger.publicKey))
        // A key no session key can be made with (not a point): dropped, nothing kept.
        var odd = Peer("10.0.0.9", key: 9)
        #expect(
            acks(dj.handle(.datagram(macBytes(up, from: &odd), from: odd.address), at: at(ms: 20)), to: odd).isEmpty)
        #expect(!dj.filter.hasSession(for: odd.publicKey) && dj.filter.drops.counts == ["bad_mac": 1])
        // A forged MAC from an unknown key keeps no key either (the cache is for keys that proved themselves).
        var forger = Peer("10.0.0.10", key: 10)
        let forged = macBytes(up, from: &forger, stationKey: testKey(0x66))
        _ = dj.handle(.datagram(forged, from: forger.address), at: at(ms: 30))
        #expect(!dj.filter.hasSession(for: forger.publicKey) && dj.filter.drops.counts == ["bad_mac": 2])
    }

    @Test func aDJThatTakesNoMACsDropsThem() {
        var dj = started(sessions: false)
        var guest = Peer("10.0.0.7", key: 7)
        _ = dj.handle(guest.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 10))
        #expect(!dj.filter.hasSession(for: guest.publicKey))
        #expect(
            acks(dj.handle(.datagram(macBytes(up, from: &guest), from: guest.address), at: at(ms: 20)), to: guest)
                .isEmpty)
        #expect(dj.filter.drops.counts == ["bad_mac": 1])
        #expect(!Fixture.djConfiguration().advert.txtRecord.contains("mac=1"))
    }

    /// The rules a signed vote meets hold for MACs: fresh keys from one address, the gate's share.
    @Test func oneGuestOneVoteAndTheGateHoldForMACVotes() {
        var dj = started()
        var first = Peer("10.0.0.7", key: 7)
        var second = Peer("10.0.0.7", port: 40_101, key: 8)  // another key on the same machine
        #expect(
            acks(dj.handle(.datagram(macBytes(up, from: &first), from: first.address), at: at(ms: 10)), to: first).map(
                \.status) == [.counted])
        #expect(
            acks(dj.handle(.datagram(macBytes(up, from: &second), from: second.address), at: at(ms: 20)), to: second)
                .map(\.status) == [.addressLimit])
        #expect(dj.engine.votes.tally == Tally(up: 1))
        // A flood of MAC votes from fresh keys on one address: each costs a key exchange, so the
        // gate gives the address its share of them and drops the rest unchecked.
        var filter = DatagramFilter(verifier: ChecksumVerifier(sessionOwner: djKey))
        let flooder = PeerAddress(host: "10.0.0.66", port: 9)
        var accepted = 0
        for n in 0..<2_000 {
            let key = PublicKey(
                bytes: withUnsafeBytes(of: UInt64(n)) { Array($0) } + [UInt8](repeating: 0x33, count: 24))!
            var peer = Peer(address: flooder, publicKey: key)
            if filter.accept(macBytes(up, from: &peer), from: flooder, at: t0, policy: .listenersOf(id)) != nil {
                accepted += 1
            }
        }
        #expect(accepted == SenderGate.Limits().perAddressBurst)
        #expect(filter.drops.counts["rate_limited"] == 2_000 - accepted)
    }

    @Test func theSessionFlagOnAnyOtherKindIsNoKindAtAll() {
        var guest = Peer("10.0.0.7", key: 7)
        for message in [Message.heartbeat(Heartbeat()), .hello(Hello(listenerName: "x")), .leave(Leave())] {
            var bytes = guest.bytes(message, station: id)
            bytes[3] |= 0x80
            #expect(throws: WireError.unknownKind(bytes[3])) { try Datagram.decode(bytes) }
        }
        // And a listener never makes one: only votes take a MAC.
        let session = ChecksumSessionSigner(publicKey: guest.publicKey, stationKey: djKey)
        let beat = try! Datagram.encode(
            .heartbeat(Heartbeat()), stationID: id, sequence: 5, session: session, fallback: guest.signer)
        #expect(try! Datagram.decode(beat).header.authentication == .signature)
    }

    @Test func aPrivateStationTakesSealedMACVotesOnly() {
        let seal = ChecksumSeal(secret: 42)
        var dj = started(seal: seal)
        var guest = Peer("10.0.0.7", key: 7)
        let bytes = macBytes(up, from: &guest)
        #expect(acks(dj.handle(.datagram(bytes, from: guest.address), at: at(ms: 10)), to: guest).isEmpty)
        #expect(dj.filter.drops.counts == ["unsealed": 1])
        let sealed = seal.seal(datagram: macBytes(up, from: &guest))
        #expect(
            acks(dj.handle(.datagram(sealed, from: guest.address), at: at(ms: 20)), to: guest).map(\.status) == [
                .counted
            ])
    }

    /// A guest sends MACs only to a DJ whose advert says it takes them.
    @Test func theAdvertSaysSoAndTheWatchPassesItOn() throws {
        var advert = Fixture.advert
        advert.takesSessionVotes = true
        #expect(advert.txtRecord.last == "mac=1")
        #expect(try StationAdvert(txtRecord: advert.txtRecord).takesSessionVotes)
        #expect(try !StationAdvert(txtRecord: Fixture.advert.txtRecord).takesSessionVotes)
        var watch = StationWatch(verifier: ChecksumVerifier())
        var out: [Effect] = []
        _ = watch.handle(
            .resolved(name: "Rooftop", address: "10.0.0.1", port: 40_000, txt: advert.txtRecord), into: &out)
        #expect(out.contains { if case .sessionFor(id, djKey) = $0 { true } else { false } })
        out = []
        _ = watch.handle(
            .resolved(name: "Rooftop", address: "10.0.0.1", port: 40_000, txt: Fixture.advert.txtRecord), into: &out)
        #expect(!out.contains { if case .sessionFor = $0 { true } else { false } })
    }

    /// Malformed input around a MAC vote: cut at every length, any byte changed. Nothing crashes,
    /// and only the untouched datagram passes the DJ's filter.
    @Test func everyCutAndEveryChangedByteOfAMACVoteIsRefused() {
        var guest = Peer("10.0.0.7", key: 7)
        let genuine = macBytes(up, from: &guest)
        let verifier = ChecksumVerifier(sessionOwner: djKey)
        func passes(_ bytes: [UInt8]) -> Bool {
            var filter = DatagramFilter(verifier: verifier)
            return filter.accept(bytes, from: guest.address, at: t0, policy: .listenersOf(id)) != nil
        }
        #expect(passes(genuine))
        for length in 0..<genuine.count { #expect(!passes(Array(genuine.prefix(length))), "cut at \(length)") }
        var random = SplitMix64(seed: 11)
        for index in genuine.indices {
            for _ in 0..<4 {
                var changed = genuine
                changed[index] ^= UInt8(truncatingIfNeeded: random.next() % 255 + 1)
                #expect(!passes(changed), "byte \(index) changed")
            }
        }
        #expect(!passes(genuine + [0]))
    }
}
