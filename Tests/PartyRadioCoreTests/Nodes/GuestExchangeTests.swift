import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The guests' exchange machine over a vote (`partyradio vote`): find the station, vote on what
/// plays, send again every 200 ms until the answer to this vote comes, or the timeout.
@Suite struct GuestExchangeTests {
    let id = Fixture.stationID
    let toDJ = Destination.peer(Fixture.djAddress)

    func voter(choice: VoteChoice = .up, query: String? = "Rooftop", timeoutMs: Int64 = 3_000)
        -> GuestExchange<GuestVote>
    {
        GuestExchange(
            GuestVote(choice), station: query, timeoutNs: Nanos.ms(timeoutMs), interfaceName: "eth0",
            verifier: ChecksumVerifier())
    }

    /// Started and resolved; the station answers at 100 ms, playing `track`. Returns that input's effects.
    func found(_ machine: inout GuestExchange<GuestVote>, _ station: inout Peer, track: Track? = Fixture.tracks[0])
        -> [Effect]
    {
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        let snapshot = Fixture.snapshot(track: track, dj: DJTime(ns: 5))
        return machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
    }

    func ack(
        _ station: inout Peer, _ status: VoteAck.Status, track: String = "t0", tally: Tally = Tally(up: 1, down: 0)
    ) -> NodeInput {
        station.send(
            .voteAck(
                VoteAck(voteSequence: 1, status: status, trackID: track, choice: .up, tally: tally, listenerCount: 2)),
            station: id)
    }

    func votes(_ effects: [Effect]) -> [Vote] {
        effects.sent.compactMap { if case .vote(let vote) = $0.message { vote } else { nil } }
    }

    @Test func findsTheStationAndVotesOnWhatPlaysAtOnce() {
        var machine = voter()
        var station = Fixture.djPeer
        #expect(machine.handle(.start, at: t0).browses == 1)
        let out = found(&machine, &station)
        #expect(votes(out) == [Vote(trackID: "t0", choice: .up)])
        #expect(out.sent.last?.to == toDJ && out.sent.last?.station == id)
        #expect(machine.nextWakeup == at(ms: 300))
    }

    @Test func retriesEvery200msUntilAcknowledged() {
        var machine = voter(choice: .down)
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        #expect(votes(machine.handle(.timer, at: at(ms: 250))).isEmpty)
        let retries = machine.run(until: at(ms: 700), from: at(ms: 250))
        #expect(
            votes(retries) == [
                Vote(trackID: "t0", choice: .down), Vote(trackID: "t0", choice: .down),
                Vote(trackID: "t0", choice: .down),
            ])

        let out = machine.handle(ack(&station, .counted), at: at(ms: 750))
        #expect(out.sent.isEmpty)
        #expect(machine.isFinished && machine.exitError == nil && machine.nextWakeup == nil)
        let result = machine.result
        #expect(result?.attempts == 4)
        #expect(result?.latencyNs == Nanos.ms(650))
        #expect(result?.answer.trackTitle == "First")
        #expect(result?.answer.ack.tally == Tally(up: 1, down: 0))
        #expect(result?.station.id == id)
        // A late duplicate of the ack finds the machine finished.
        #expect(machine.handle(ack(&station, .counted), at: at(ms: 760)).isEmpty)
    }

    @Test func aStaleTrackRetargetsUpToThreeTimes() {
        var machine = voter()
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        for (n, track) in ["t1", "t2", "t0"].enumerated() {
            let out = machine.handle(ack(&station, .staleTrack, track: track), at: at(ms: 150 + Int64(n) * 10))
            #expect(votes(out) == [Vote(trackID: track, choice: .up)], "retarget \(n + 1)")
            #expect(!machine.isFinished)
        }
        // The fourth is the answer: a refusal, for the command to say.
        _ = machine.handle(ack(&station, .staleTrack, track: "t1"), at: at(ms: 200))
        #expect(machine.isFinished && machine.exitError == nil)
        #expect(machine.result?.answer.ack.status == .staleTrack)
    }

    @Test func aRetargetedVoteCanStillBeCounted() {
        var machine = voter()
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        _ = machine.handle(ack(&station, .staleTrack, track: "t1"), at: at(ms: 150))
        _ = machine.handle(ack(&station, .counted, track: "t1"), at: at(ms: 160))
        #expect(machine.result?.answer.ack.trackID == "t1")
        #expect(machine.result?.attempts == 2)
        // Measured from the first datagram of the vote answered, the retargeted one.
        #expect(machine.result?.latencyNs == Nanos.ms(10))
        #expect(machine.exitError == nil)
    }

    @Test func aCountedAnswerForAnotherTrackIsNotThisVotesAnswer() {
        var machine = voter()
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        _ = machine.handle(ack(&station, .staleTrack, track: "t1"), at: at(ms: 150))
        // A late answer to the first vote (on t0) does not answer the vote on t1.
        _ = machine.handle(ack(&station, .counted, track: "t0"), at: at(ms: 160))
        #expect(!machine.isFinished && machine.result == nil)
        #expect(votes(machine.handle(.timer, at: at(ms: 350))) == [Vote(trackID: "t1", choice: .up)])
        _ = machine.handle(ack(&station, .counted, track: "t1"), at: at(ms: 360))
        #expect(machine.result?.answer.ack.trackID == "t1" && machine.result?.attempts == 3)
    }

    @Test func aStationBetweenTracksRefuses() {
        var between = voter()
        var station = Fixture.djPeer
        _ = found(&between, &station)
        _ = between.handle(ack(&station, .noTrack, track: ""), at: at(ms: 150))
        #expect(between.isFinished && between.exitError == nil && between.result?.answer.ack.status == .noTrack)
        #expect(votes(between.handle(.timer, at: at(ms: 400))).isEmpty)

        var silent = voter()
        var quiet = Fixture.djPeer
        let out = found(&silent, &quiet, track: nil)
        #expect(votes(out).isEmpty)
        #expect(silent.isFinished && silent.exitError?.code == .refused)
        #expect(silent.exitError?.description.contains("not playing anything") == true)
    }

    @Test func noStationWithinTheTimeoutIsNotFound() {
        var machine = voter()
        _ = machine.handle(.start, at: t0)
        #expect(machine.nextWakeup == at(ms: 3_000))
        _ = machine.run(until: at(ms: 3_000), from: t0)
        #expect(machine.isFinished && machine.exitError?.code == .notFound && machine.exitError?.exitCode == 3)
    }

    @Test func noAcknowledgementWithinTheTimeoutIsNotFound() {
        var machine = voter()
        var station = Fixture.djPeer
        var sent = votes(found(&machine, &station)).count
        sent += votes(machine.run(until: at(ms: 3_000), from: at(ms: 100))).count
        #expect(sent == 15)  // 100, 300, … 2900 ms
        #expect(machine.isFinished && machine.exitError?.code == .notFound)
        #expect(machine.exitError?.description.contains("did not acknowledge") == true)
    }

    @Test func acksFromAnyoneButTheStationAreDropped() {
        var machine = voter()
        var station = Fixture.djPeer
        var impostor = Peer("10.0.0.66", key: 0x66)
        _ = found(&machine, &station)
        _ = machine.handle(ack(&impostor, .counted), at: at(ms: 150))
        #expect(!machine.isFinished && machine.result == nil)
        #expect(machine.filter.drops.counts == ["bad_signature": 1])
    }

    @Test func quitAndDiscoveryFailureEndIt() {
        var quitting = voter()
        _ = quitting.handle(.start, at: t0)
        #expect(quitting.handle(.quit, at: at(ms: 10)).isEmpty)
        #expect(quitting.isFinished && quitting.exitError == nil)

        var failing = voter()
        _ = failing.handle(.start, at: t0)
        _ = failing.handle(.discovery(.failed("no avahi")), at: at(ms: 10))
        #expect(failing.isFinished && failing.exitError?.code == .discovery)
    }
}
