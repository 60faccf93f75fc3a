import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The retry loop on its own: the first datagram at once, then one every 200 ms, the request's
/// own answer taken, others ignored, a changed request sent again at once, nothing from the
/// deadline on.
@Suite struct RetryTests {
    let station = StationSummary(
        id: Fixture.stationID, serviceName: Fixture.serviceName, address: Fixture.djAddress.host,
        port: Fixture.djAddress.port, advert: Fixture.advert, snapshot: Fixture.snapshot(dj: DJTime(ns: 5)),
        positionNs: 0)

    func counted(_ track: String) -> Message {
        .voteAck(
            VoteAck(
                voteSequence: 1, status: .counted, trackID: track, choice: .up, tally: Tally(up: 1, down: 0),
                listenerCount: 1))
    }

    @Test func sendsAtOnceThenEvery200msUntilTheDeadline() {
        var retry = Retry(GuestVote(.up, trackID: "t0"), deadline: at(ms: 1_000))
        let vote = Message.vote(Vote(trackID: "t0", choice: .up))
        var sent: [Int64] = []
        for ms in stride(from: Int64(0), to: 1_000, by: 50) where retry.due(at: at(ms: ms)) == .send(vote) {
            sent.append(ms)
        }
        // At 0, 200, 400, 600, 800 ms: 1,000 ms over 200 is five, and none at the deadline.
        #expect(sent == [0, 200, 400, 600, 800])
        #expect(retry.attempts == 5 && retry.firstSent == t0)
        #expect(retry.nextWakeup == at(ms: 1_000))
        #expect(retry.due(at: at(ms: 1_000)) == .expired)
    }

    @Test func theNextWakeupIsTheNextResendOrTheDeadline() {
        var retry = Retry(GuestVote(.up, trackID: "t0"), deadline: at(ms: 300))
        #expect(retry.nextWakeup == at(ms: 300))
        _ = retry.due(at: at(ms: 10))
        #expect(retry.nextWakeup == at(ms: 210))
        _ = retry.due(at: at(ms: 210))
        #expect(retry.nextWakeup == at(ms: 300))
    }

    @Test func nothingToSendWaitsButStillExpires() {
        var retry = Retry(GuestVote(.up), deadline: at(ms: 500))  // no track yet
        #expect(retry.due(at: t0) == .wait)
        #expect(retry.due(at: at(ms: 499)) == .wait && retry.attempts == 0)
        #expect(retry.due(at: at(ms: 500)) == .expired)
    }

    @Test func onlyItsOwnAnswerIsTaken() {
        var retry = Retry(GuestVote(.up, trackID: "t0", retargets: 0), deadline: at(ms: 1_000))
        var out: [Effect] = []
        _ = retry.due(at: t0)
        #expect(isIgnored(retry.read(counted("t9"), from: station, at: at(ms: 5), into: &out)))
        #expect(
            isIgnored(
                retry.read(
                    .chatAck(ChatAck(messageID: 1, status: .delivered)), from: station, at: at(ms: 6), into: &out)))
        guard case .answered(let answer) = retry.read(counted("t0"), from: station, at: at(ms: 7), into: &out) else {
            Issue.record("the vote's own answer was not taken")
            return
        }
        #expect(answer.ack.trackID == "t0" && out.isEmpty)
    }

    @Test func aRefusalIsAnAnswerAndAChangeIsSentAtOnce() {
        var staying = Retry(GuestVote(.up, trackID: "t0", retargets: 0), deadline: at(ms: 1_000))
        var out: [Effect] = []
        let stale = Message.voteAck(
            VoteAck(
                voteSequence: 1, status: .staleTrack, trackID: "t1", choice: .clear, tally: Tally(), listenerCount: 1))
        guard case .answered(let answer) = staying.read(stale, from: station, at: t0, into: &out) else {
            Issue.record("a refusal is the answer")
            return
        }
        #expect(answer.ack.status == .staleTrack)

        var following = Retry(GuestVote(.up, trackID: "t0", retargets: 1), deadline: at(ms: 1_000))
        _ = following.due(at: t0)
        guard case .changed = following.read(stale, from: station, at: at(ms: 50), into: &out) else {
            Issue.record("a stale track moves the vote")
            return
        }
        // Sent again at once (not 200 ms after the last), and measured from there.
        #expect(following.due(at: at(ms: 60)) == .send(.vote(Vote(trackID: "t1", choice: .up))))
        #expect(following.attempts == 2 && following.firstSent == at(ms: 60))
    }

    func isIgnored<Answer>(_ reading: Reading<Answer>) -> Bool { if case .ignored = reading { true } else { false } }
}
