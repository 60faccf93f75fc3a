import PartyRadioCore
import PartyRadioSecurity
import Testing

@testable import PartyRadioNode

/// The session MAC with real keys (libsodium): the guest and the DJ make the same key and no one
/// else does; a vote with its MAC passes a DJ's filter, a MAC under any other key does not.
@Suite struct SessionMACTests {
    let dj = Identity.generate()
    let guest = Identity.generate()
    let mallory = Identity.generate()
    let from = PeerAddress(host: "10.0.0.7", port: 40_100)
    let vote = Message.vote(Vote(trackID: "t0", choice: .up))

    @Test func theGuestAndTheDJMakeTheSameKeyAndNoOneElseDoes() throws {
        let guestSide = try #require(guest.sessionKey(with: dj.publicKey))
        let djSide = try #require(dj.sessionKey(with: guest.publicKey))
        #expect(guestSide == djSide)
        #expect(mallory.sessionKey(with: dj.publicKey) != djSide)
        #expect(guest.sessionKey(with: mallory.publicKey) != guestSide)
        // Keys of small order (here the neutral element and a point of order 4) make none.
        for bytes in [[1] + [UInt8](repeating: 0, count: 31), [UInt8](repeating: 0, count: 32)] {
            #expect(dj.sessionKey(with: try #require(PublicKey(bytes: bytes))) == nil)
        }
    }

    func accept(_ bytes: [UInt8], sessions: Identity?) -> (Inbound?, DropCounters) {
        var filter = DatagramFilter(verifier: SodiumVerifier(sessions: sessions))
        let inbound = filter.accept(bytes, from: from, at: LocalTime(ns: 1_000), policy: .listenersOf(dj.stationID))
        return (inbound, filter.drops)
    }

    @Test func aVoteWithItsMACPassesTheDJsFilterAndForgeriesDoNot() throws {
        let signer = try #require(guest.sessionSigner(for: dj.publicKey))
        let bytes = try Datagram.encode(vote, stationID: dj.stationID, sequence: 7, session: signer, fallback: guest)
        #expect(bytes.count == MessageHeader.size + 4 + Datagram.sessionMACSize)
        let (inbound, _) = accept(bytes, sessions: dj)
        #expect(inbound?.sender == guest.publicKey && inbound?.message == vote)
        // Mallory's MAC claiming the guest's key (she can make her own session key only).
        let hers = try #require(mallory.sessionSigner(for: dj.publicKey))
        var forged = try Datagram.encode(vote, stationID: dj.stationID, sequence: 8, session: hers, fallback: mallory)
        forged.replaceSubrange(12..<44, with: guest.publicKey.bytes)
        #expect(accept(forged, sessions: dj).1.counts == ["bad_mac": 1])
        // The guest's MAC for another station, sent to this one: another key.
        let elsewhere = try #require(guest.sessionSigner(for: mallory.publicKey))
        let misdirected = try Datagram.encode(
            vote, stationID: dj.stationID, sequence: 9, session: elsewhere, fallback: guest)
        #expect(accept(misdirected, sessions: dj).1.counts == ["bad_mac": 1])
        // Any byte changed, and a DJ that takes no MACs.
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x01
            #expect(accept(changed, sessions: dj).0 == nil, "byte \(index)")
        }
        #expect(accept(bytes, sessions: nil).1.counts == ["bad_mac": 1])
        // The signed vote still passes: guests of DJs without `mac=1`, and older guests.
        let signed = try Datagram.encode(vote, stationID: dj.stationID, sequence: 10, signer: guest)
        #expect(accept(signed, sessions: dj).0 != nil)
    }
}
