import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The DJ's plays as stats: the pure log, the per-track sums, and the records the DJ machine hands out.
@Suite struct PlayLogTests {
    let a = Fixture.tracks[0]
    let b = Fixture.tracks[1]

    @Test func aPlayClosesWithTheTallyAndEndingItWasGiven() {
        var log = PlayLog()
        #expect(log.close(.stopped, tally: Tally()) == nil)
        #expect(log.started(a, at: DJTime(ns: 100), listeners: 3, previousEnding: .played, tally: Tally()) == nil)
        #expect(log.playing == a)
        let first = log.started(
            b, at: DJTime(ns: 500), listeners: 4, previousEnding: .djSkip, tally: Tally(up: 2, down: 1))
        #expect(
            first
                == PlayRecord(
                    trackID: "t0", title: "First", artist: "A", startedAt: DJTime(ns: 100), listenersAtStart: 3, up: 2,
                    down: 1, ending: .djSkip))
        let second = log.close(.stopped, tally: Tally(down: 2))
        #expect(second?.trackID == "t1" && second?.listenersAtStart == 4 && second?.ending == .stopped)
        #expect(second?.startedAt == DJTime(ns: 500) && second?.down == 2)
        #expect(log.playing == nil && log.close(.stopped, tally: Tally()) == nil)
    }

    @Test func tracksAreSummedAndTheBestAndWorstGoByApprovalThenPlays() {
        func play(_ id: String, up: UInt32, down: UInt32, _ ending: PlayRecord.Ending, listeners: Int = 2) -> PlayRecord
        {
            PlayRecord(
                trackID: id, title: "T\(id)", artist: "A", startedAt: DJTime(ns: 0), listenersAtStart: listeners,
                up: up, down: down, ending: ending)
        }
        let tracks = TrackStats.summarize([
            play("x", up: 1, down: 0, .played), play("y", up: 0, down: 2, .crowdSkip),
            play("x", up: 2, down: 0, .djSkip, listeners: 5), play("z", up: 1, down: 0, .played),
            play("n", up: 0, down: 0, .stopped),
        ])
        #expect(tracks.map(\.trackID) == ["x", "y", "z", "n"])
        #expect(tracks[0].plays == 2 && tracks[0].up == 3 && tracks[0].djSkips == 1 && tracks[0].skips == 1)
        #expect(tracks[0].mostListenersAtStart == 5)
        #expect(tracks[1].crowdSkips == 1 && tracks[1].approvalPercent == 0)
        #expect(tracks[3].approvalPercent == nil)
        let (best, worst) = TrackStats.bestAndWorst(tracks)
        #expect(best?.trackID == "x")  // 100 % like z, but played twice
        #expect(worst?.trackID == "y")
        #expect(TrackStats.bestAndWorst([tracks[3]]).best == nil)
    }

    @Test func theDJRecordsEachPlayAsTheTrackChangesAndAtQuit() {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        #expect(dj.handle(.start, at: t0).records.isEmpty)
        var guest = Peer("10.0.0.7", key: 7)
        _ = dj.handle(guest.send(.hello(Hello(listenerName: "kitchen")), station: Fixture.stationID), at: at(ms: 50))
        _ = dj.handle(guest.send(.vote(Vote(trackID: "t0", choice: .up)), station: Fixture.stationID), at: at(ms: 100))

        // t0 plays through (10 s); t1 starts with the guest in the room and is skipped by the DJ.
        _ = dj.handle(guest.send(.hello(Hello(listenerName: "kitchen")), station: Fixture.stationID), at: at(ms: 9_000))
        let end = dj.handle(.timer, at: at(ms: 10_000)).records
        #expect(end.map(\.trackID) == ["t0"] && end.first?.ending == .played && end.first?.up == 1)
        #expect(end.first?.listenersAtStart == 0 && end.first?.startedAt == DJTime(onTheDJ: t0))
        let skip = dj.handle(.control("next"), at: at(ms: 12_000)).records
        #expect(skip.map(\.trackID) == ["t1"] && skip.first?.ending == .djSkip)
        #expect(skip.first?.listenersAtStart == 1 && skip.first?.startedAt == DJTime(onTheDJ: at(ms: 10_000)))

        // prev cuts t2 short too; quit closes the play of t1 again.
        #expect(dj.handle(.control("prev"), at: at(ms: 13_000)).records.map(\.ending) == [.djSkip])
        let quit = dj.handle(.quit, at: at(ms: 14_000)).records
        #expect(quit.map(\.trackID) == ["t1"] && quit.first?.ending == .stopped)
    }

    @Test func theLastTrackOfAQueueWithoutRepeatIsRecordedOnceWhenItEnds() {
        var dj = DJMachine(
            configuration: Fixture.djConfiguration(queue: [a]), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        _ = dj.handle(.control("repeat off"), at: at(ms: 1))
        #expect(dj.handle(.timer, at: at(ms: 10_000)).records.map(\.ending) == [.played])
        #expect(dj.handle(.quit, at: at(ms: 11_000)).records.isEmpty)
    }
}
