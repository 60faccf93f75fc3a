import NodeTestSupport
import Synchronization
import Testing

@testable import PartyRadioCore

/// A new guest's first exchange gets through a flood (docs/SECURITY.md): once the open share of the
/// verification budget is spent, an unknown sender is answered with a cookie challenge (no
/// signature check, no state) and its datagrams that show the cookie of its address are verified
/// from a reserve that a flood from addresses that do not read their answers never reaches.
@Suite struct AdmissionCookieTests {
    final class CountingVerifier: DatagramVerifier {
        let checks = Atomic<Int>(0)
        func verify(_ datagram: Datagram) -> Bool {
            checks.add(1, ordering: .relaxed)
            return ChecksumVerifier().verify(datagram)
        }
    }

    let id = Fixture.stationID
    let secret: (UInt64, UInt64) = (0x5EC, 0x12E7)

    /// A vote whose signature is garbage, from a fresh key, as `scripts/forged-flood.py` sends them.
    func forged(key: UInt64, sequence: UInt64 = 1, cookie: UInt64? = nil) -> [UInt8] {
        let sender = floodKey(key)
        var writer = ByteWriter()
        MessageHeader(kind: .vote, stationID: id, sender: sender, sequence: sequence, cookie: cookie)
            .encode(into: &writer)
        Vote(trackID: "t0", choice: .up).encode(into: &writer)
        return writer.bytes + [UInt8](repeating: 0xEE, count: Datagram.signatureSize)
    }

    func floodKey(_ key: UInt64) -> PublicKey {
        PublicKey(bytes: withUnsafeBytes(of: key) { Array($0) } + [UInt8](repeating: 0x5A, count: 24))!
    }

    /// 64 addresses of one machine (aliases), the flooder's.
    func flooder(_ n: Int) -> PeerAddress { PeerAddress(host: "10.0.1.\(n % 64 + 1)", port: 9) }

    /// `rate` forged votes a second from 64 addresses, from `start` for `seconds`, into `filter`.
    func flood(
        _ filter: inout DatagramFilter, rate: Int, from start: LocalTime, seconds: Double,
        cookieFor: ((Int) -> UInt64?)? = nil, effects: inout [Effect]
    ) -> Int {
        let count = Int(Double(rate) * seconds)
        let step = Int64(1e9 / Double(rate))
        for n in 0..<count {
            let key = cookieFor == nil ? UInt64(n) + 1_000_000 : UInt64(n % 64)
            _ = filter.accept(
                forged(key: key, sequence: UInt64(n + 1), cookie: cookieFor?(n)), from: flooder(n),
                at: start + Int64(n) * step, policy: .listenersOf(id), logInto: &effects)
        }
        return count
    }

    func challenges(_ effects: [Effect]) -> [(CookieChallenge, Destination)] {
        effects.sent.compactMap { if case .cookieChallenge(let c) = $0.message { (c, $0.to) } else { nil } }
    }

    @Test func aNewGuestGetsThroughA50kFloodFrom64AddressesOneRoundTripLater() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier, cookieSecret: secret)
        var effects: [Effect] = []
        _ = flood(&filter, rate: 50_000, from: t0, seconds: 1.5, effects: &effects)
        // The flood used the open share: a guest that shows nothing is not verified, it is
        // challenged, at the address and port its query came from, with its own cookie.
        var guest = Peer("10.0.0.50", port: 51_000, key: 50)
        var out: [Effect] = []
        let first = guest.bytes(.query(Query()), station: id)
        let arrival = t0 + Nanos.ms(1_500)
        #expect(filter.accept(first, from: guest.address, at: arrival, policy: .listenersOf(id), logInto: &out) == nil)
        let challenge = try! #require(challenges(out).first)
        #expect(challenge.1 == .peer(guest.address))
        #expect(challenge.0.echo == guest.sequence)
        let cookies = AddressCookies(secret: secret)
        #expect(challenge.0.cookie == cookies.cookie(for: guest.publicKey, at: guest.address, now: arrival))
        // Its query again with the cookie, a round trip later: verified from the reserve.
        let again = guest.bytes(.query(Query()), station: id, cookie: challenge.0.cookie)
        #expect(
            filter.accept(again, from: guest.address, at: arrival + Nanos.ms(1), policy: .listenersOf(id)) != nil)
        // Known from then on: its vote passes over budget without a cookie.
        _ = flood(&filter, rate: 50_000, from: arrival + Nanos.ms(2), seconds: 0.1, effects: &effects)
        let vote = guest.bytes(.vote(Vote(trackID: "t0", choice: .up)), station: id)
        #expect(
            filter.accept(vote, from: guest.address, at: arrival + Nanos.ms(103), policy: .listenersOf(id)) != nil)
        // The flood cost no more signature checks than the budget in all (1.6 s: two windows).
        #expect(verifier.checks.load(ordering: .relaxed) <= 2 * SenderGate.Limits().verificationsPerSecond + 3)
    }

    /// A flood that lasts gets the open share once, then 100 checks a second: 3,000 forged
    /// signatures a second took all the CPU a busy machine gave the DJ (the kernel then dropped the
    /// new guest's datagrams with the flood's before the DJ read them). The new guest still gets
    /// through, by its cookie; and once the flood is over, the open share is whole again.
    @Test func aFloodThatLastsGetsFewChecksAndANewGuestStillGetsThrough() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier, cookieSecret: secret)
        var effects: [Effect] = []
        let limits = SenderGate.Limits()
        _ = flood(&filter, rate: 50_000, from: t0, seconds: 4.5, effects: &effects)
        // The first second's open share, then 100 a second in each of the others (four, the last half over).
        let checked = verifier.checks.load(ordering: .relaxed)
        #expect(checked <= limits.openPerSecond + 4 * limits.openUnderFloodPerSecond + 4, "\(checked) checks")
        // A new guest in the fifth second, its 100 checks spent: challenged, then verified from the reserve with its cookie.
        var guest = Peer("10.0.0.50", port: 51_000, key: 50)
        let arrival = t0 + Nanos.ms(4_500)
        var out: [Effect] = []
        let first = guest.bytes(.query(Query()), station: id)
        #expect(filter.accept(first, from: guest.address, at: arrival, policy: .listenersOf(id), logInto: &out) == nil)
        let challenge = try! #require(challenges(out).first)
        let again = guest.bytes(.query(Query()), station: id, cookie: challenge.0.cookie)
        #expect(filter.accept(again, from: guest.address, at: arrival, policy: .listenersOf(id)) != nil)
        // Two quiet seconds later the flood is over: a guest that shows nothing is verified at once.
        var later = Peer("10.0.0.51", port: 51_000, key: 51)
        let quiet = later.bytes(.query(Query()), station: id)
        #expect(
            filter.accept(quiet, from: later.address, at: arrival + Nanos.seconds(2), policy: .listenersOf(id)) != nil)
    }

    @Test func challengesAreBoundedPerAddressAndInAllAndNeverLargerThanWhatTheyAnswer() {
        var filter = DatagramFilter(verifier: ChecksumVerifier(), cookieSecret: secret)
        var effects: [Effect] = []
        // A second of 50,000 forged votes from 64 addresses, then from 10,000 (spoofed) ones.
        _ = flood(&filter, rate: 50_000, from: t0, seconds: 1, effects: &effects)
        let limits = SenderGate.Limits()
        let fromAliases = challenges(effects)
        #expect(!fromAliases.isEmpty)
        #expect(fromAliases.count <= 64 * limits.challengesPerAddress)
        for (_, to) in fromAliases {
            #expect(fromAliases.filter { $0.1 == to }.count <= limits.challengesPerAddress)
        }
        effects = []
        for n in 0..<10_000 {
            let from = PeerAddress(host: "10.\(n / 65536 + 50).\(n / 256 % 256).\(n % 256)", port: 9)
            _ = filter.accept(
                forged(key: UInt64(n) + 5_000_000), from: from, at: t0 + Nanos.seconds(1) + Int64(n) * 90_000,
                policy: .listenersOf(id), logInto: &effects)
        }
        #expect(challenges(effects).count <= limits.challengesPerSecond)
        // Unsigned, and smaller than the smallest datagram a guest sends (a query: header and signature).
        let bytes = try! Datagram.encode(
            .cookieChallenge(CookieChallenge(echo: 1, cookie: 2)), stationID: id, sequence: 3,
            signer: ChecksumSigner(publicKey: testKey(Fixture.djKeySeed)))
        #expect(bytes.count == MessageHeader.size + 16)
        #expect(bytes.count < MessageHeader.size + Datagram.signatureSize)
    }

    @Test func onlyTheSendersOwnCookieReachesTheReserve() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier, cookieSecret: secret)
        var effects: [Effect] = []
        _ = flood(&filter, rate: 50_000, from: t0, seconds: 0.5, effects: &effects)
        let now = t0 + Nanos.ms(500)
        let cookies = AddressCookies(secret: secret)
        var guest = Peer("10.0.0.50", port: 51_000, key: 50)
        let other = Peer("10.0.0.51", port: 51_000, key: 51)
        let wrong: [UInt64] = [
            cookies.cookie(for: other.publicKey, at: guest.address, now: now),  // another key's
            cookies.cookie(for: guest.publicKey, at: other.address, now: now),  // another address's
            cookies.cookie(for: guest.publicKey, at: PeerAddress(host: "10.0.0.50", port: 51_001), now: now),
            cookies.cookie(for: guest.publicKey, at: guest.address, now: now - 2 * AddressCookies.epochNs),  // old
            AddressCookies(secret: (1, 2)).cookie(for: guest.publicKey, at: guest.address, now: now),  // a restart's
        ]
        let before = verifier.checks.load(ordering: .relaxed)
        for (n, cookie) in wrong.enumerated() {
            let bytes = guest.bytes(.query(Query()), station: id, cookie: cookie)
            #expect(
                filter.accept(bytes, from: guest.address, at: now + Int64(n), policy: .listenersOf(id)) == nil)
        }
        #expect(verifier.checks.load(ordering: .relaxed) == before)
        #expect(filter.drops.counts["challenged", default: 0] >= wrong.count)
        // Last epoch's cookie is still good.
        let last = cookies.cookie(for: guest.publicKey, at: guest.address, now: now - AddressCookies.epochNs)
        let bytes = guest.bytes(.query(Query()), station: id, cookie: last)
        #expect(filter.accept(bytes, from: guest.address, at: now + 10, policy: .listenersOf(id)) != nil)
    }

    @Test func aFlooderWithCookiesForAll64OfItsAddressesLeavesTheReserveToANewGuest() {
        var filter = DatagramFilter(verifier: ChecksumVerifier(), cookieSecret: secret)
        let cookies = AddressCookies(secret: secret)
        var effects: [Effect] = []
        // The flooder reads at its 64 addresses, so it has each one's cookie for one key there.
        _ = flood(
            &filter, rate: 50_000, from: t0, seconds: 1.5,
            cookieFor: { n in cookies.cookie(for: floodKey(UInt64(n % 64)), at: flooder(n), now: t0) },
            effects: &effects)
        var guest = Peer("10.0.0.50", port: 51_000, key: 50)
        let now = t0 + Nanos.ms(1_500)
        let bytes = guest.bytes(
            .query(Query()), station: id, cookie: cookies.cookie(for: guest.publicKey, at: guest.address, now: now))
        #expect(filter.accept(bytes, from: guest.address, at: now, policy: .listenersOf(id)) != nil)
    }

    @Test func belowBudgetNothingIsChallengedAndACookieIsNotNeeded() {
        var filter = DatagramFilter(verifier: ChecksumVerifier(), cookieSecret: secret)
        var guest = Peer("10.0.0.50", key: 50)
        var out: [Effect] = []
        let bytes = guest.bytes(.query(Query()), station: id, cookie: 12345)  // stale: ignored
        #expect(filter.accept(bytes, from: guest.address, at: t0, policy: .listenersOf(id), logInto: &out) != nil)
        #expect(challenges(out).isEmpty)
    }

    // MARK: The guest's side

    @Test func aGuestTakesAChallengeOnlyWhenItAnswersWhatItSent() {
        var outbox = Outbox(signer: ChecksumSigner(publicKey: testKey(50)))
        let query = outbox.datagram(for: .query(Query()), station: id, now: t0, realTimeNs: 1_000)!
        let sent = try! Datagram.decode(query).header
        #expect(sent.cookie == nil)
        let unknownEcho = outbox.takeCookie(CookieChallenge(echo: 999, cookie: 7), from: id, now: t0)
        let otherStation = outbox.takeCookie(
            CookieChallenge(echo: sent.sequence, cookie: 7), from: Fixture.otherStationID, now: t0)
        let answersTheQuery = outbox.takeCookie(CookieChallenge(echo: sent.sequence, cookie: 7), from: id, now: t0)
        #expect(!unknownEcho && !otherStation && answersTheQuery)
        // What goes to that station now shows it, signed with it; the station's own kinds never do.
        let vote = outbox.datagram(
            for: .vote(Vote(trackID: "t0", choice: .up)), station: id, now: t0 + 1, realTimeNs: 2_000)!
        let decoded = try! Datagram.decode(vote)
        #expect(decoded.header.cookie == 7)
        #expect(ChecksumVerifier().verify(decoded))
        let elsewhere = outbox.datagram(
            for: .query(Query()), station: Fixture.otherStationID, now: t0, realTimeNs: 3_000)!
        #expect(try! Datagram.decode(elsewhere).header.cookie == nil)
        // Until the DJ would take it no longer.
        let late = outbox.datagram(
            for: .query(Query()), station: id, now: t0 + Outbox.cookieLifetimeNs, realTimeNs: 4_000)!
        #expect(try! Datagram.decode(late).header.cookie == nil)
    }

    @Test func theGuestsExchangeAsksAgainAtOnceWithTheCookie() {
        var machine = GuestExchange(
            GuestVote(.up), station: "Rooftop", timeoutNs: Nanos.seconds(3), interfaceName: "eth0",
            verifier: ChecksumVerifier())
        _ = machine.handle(.start, at: t0)
        let resolved = machine.handle(Fixture.resolved(), at: at(ms: 20))
        #expect(resolved.sent.contains { $0.message == .query(Query()) })
        // The busy DJ's challenge (unsigned): the cookie goes to the outbox, the query goes again now.
        var dj = Fixture.djPeer
        let challenge = CookieChallenge(echo: 5, cookie: 77)
        let out = machine.handle(dj.send(.cookieChallenge(challenge), station: id), at: at(ms: 25))
        #expect(out.contains { if case .cookieFrom(id, challenge) = $0 { true } else { false } })
        #expect(out.sent.contains { $0.message == .query(Query()) })
        #expect(machine.filter.challengesTaken == 1)
        // A challenge is no word from the station: it does not list it.
        #expect(machine.station == nil)
    }

    @Test func aChallengeFromAnotherKeyOrToTheDJIsDropped() {
        var filter = DatagramFilter(verifier: ChecksumVerifier())
        var impostor = Peer("10.0.0.9", key: 9)
        var out: [Effect] = []
        let bytes = impostor.bytes(.cookieChallenge(CookieChallenge(echo: 1, cookie: 2)), station: id)
        _ = filter.accept(
            bytes, from: impostor.address, at: t0, policy: .stations([id: testKey(Fixture.djKeySeed)]), logInto: &out)
        #expect(!out.contains { if case .cookieFrom = $0 { true } else { false } })
        #expect(filter.drops.counts["bad_signature"] == 1)
        _ = filter.accept(bytes, from: impostor.address, at: t0, policy: .listenersOf(id), logInto: &out)
        #expect(filter.drops.counts["unexpected_sender"] == 1)
    }
}
