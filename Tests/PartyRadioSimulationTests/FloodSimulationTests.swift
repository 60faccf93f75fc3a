import NodeTestSupport
import PartyRadioCore
import Testing

/// A forged-signature flood from 64 addresses (issue 27, attack 5): the real DJ, listener and
/// voter machines on the simulated LAN, the flood as datagrams from 64 addresses that never read
/// their answers. A listener already in the room keeps hearing the station, and a guest who comes
/// during the flood votes on its first try: its first query is answered by a cookie challenge, and
/// its query with the cookie is verified from the reserve.
@Suite struct FloodSimulationTests {
    static let start: Int64 = 1_000_000_000_000
    static let key = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
    static let id = StationID(rawValue: 0x1234_5678_9ABC_DEF0)

    /// A forged vote from a fresh key: checking it would cost a signature check.
    static func forged(_ n: Int) -> [UInt8] {
        var seed = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        let sender = PublicKey(bytes: (0..<32).map { _ in UInt8(truncatingIfNeeded: seed.rotate()) })!
        return try! Datagram.encode(
            .vote(Vote(trackID: "t0", choice: .up)), stationID: id, sequence: UInt64(n) + 1,
            signer: Forger(publicKey: sender))
    }

    struct Outcome {
        var voter: GuestExchange<GuestVote>
        /// From the guest's start to its answer.
        var tookNs: Int64?
        var listenerSilent: Bool
        var challenged: Int
    }

    /// A DJ, a listener from the start, `rate` forged votes a second from 64 addresses from 3 s to
    /// 9 s, and a fresh guest's `vote up` at 6.5 s (the open share of the DJ's budget is spent by
    /// then in each second of the flood).
    static func run(rate: Int, seed: UInt64) -> Outcome {
        let lan = SimLAN(seed: seed, faults: SimFaults())
        let verifier = ChecksumVerifier(seal: nil)
        let advert = StationAdvert(stationID: id, group: id.multicastGroup, publicKey: key)
        let track = Track(
            id: "t0", title: "Loud", artist: "DJ", album: "", durationMs: 600_000,
            source: "http://10.9.0.1:8080/media/t0")
        let dj = lan.addDJ(
            name: "Sturdy", advert: advert, queue: [track], crowdSkipPercent: 0, verifier: verifier, key: key,
            startNs: start)
        lan.schedule(at: start, .input(dj.index, .start))
        let listener = lan.add(
            name: "listener",
            machine: .listener(
                ListenerMachine(
                    configuration: .init(
                        query: "Sturdy", timeoutNs: 10_000_000_000, interfaceName: "sim0", listenerName: "guest",
                        playsAudio: true),
                    verifier: verifier)),
            key: PublicKey(bytes: [UInt8](repeating: 9, count: 32))!, offsetNs: 0, driftPPM: 0)
        lan.schedule(at: start + 500_000_000, .input(listener.index, .start))
        let voteAt = start + 6_500_000_000
        let voter = lan.add(
            name: "voter",
            machine: .voter(
                GuestExchange(
                    GuestVote(.up), station: "Sturdy", timeoutNs: 5_000_000_000, interfaceName: "sim0",
                    verifier: verifier)),
            key: PublicKey(bytes: [UInt8](repeating: 11, count: 32))!, offsetNs: 0, driftPPM: 0)
        lan.schedule(at: voteAt, .input(voter.index, .start))
        let floodStart = start + 3_000_000_000
        let count = rate * 6
        for n in 0..<count {
            let from = PeerAddress(host: "10.9.1.\(n % 64 + 1)", port: 9)
            lan.schedule(
                at: floodStart + Int64(n) * 1_000_000_000 / Int64(rate),
                .input(dj.index, .datagram(forged(n), from: from)))
        }
        lan.run(until: start + 12_000_000_000)
        guard case .voter(let machine) = voter.machine, case .dj(let djMachine) = dj.machine else {
            fatalError("the nodes changed kind")
        }
        let silent = listener.reports.contains { if case .stationSilent = $0.1 { true } else { false } }
        return Outcome(
            voter: machine, tookNs: voter.finishedAt.map { $0 - voteAt }, listenerSilent: silent,
            challenged: djMachine.filter.drops.counts["challenged", default: 0])
    }

    @Test(arguments: [20_000, 50_000])
    func aNewGuestVotesOnItsFirstTryDuringAFlood(rate: Int) {
        let outcome = Self.run(rate: rate, seed: 27)
        let voter = outcome.voter
        #expect(voter.exitError == nil, "\(voter.exitError.map { "\($0)" } ?? "")")
        #expect(voter.result?.answer.ack.status == .counted)
        // Found and answered within a second of starting: a round trip more than without a flood,
        // not a timeout's worth of retries.
        let took = outcome.tookNs ?? .max
        #expect(took < 1_000_000_000, "the vote took \(took / 1_000_000) ms")
        #expect(voter.filter.challengesTaken >= 1, "the DJ was busy: the guest showed a cookie")
        #expect(outcome.challenged >= 1)
        #expect(!outcome.listenerSilent, "the listener already in the room heard silence")
    }
}

/// Signs with garbage: checking it costs a signature check, and it never verifies.
private struct Forger: Signer {
    let publicKey: PublicKey
    func sign(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0xEE, count: Datagram.signatureSize) }
}

extension UInt64 {
    /// SplitMix64's step, for the flood's made-up keys.
    fileprivate mutating func rotate() -> UInt64 {
        self &+= 0x9E37_79B9_7F4A_7C15
        var z = self
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
