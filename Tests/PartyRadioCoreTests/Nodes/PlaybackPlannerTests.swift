import Testing

@testable import PartyRadioCore

/// What the player is told as the station changes.
@Suite struct PlaybackPlannerTests {
    let track = Fixture.tracks[0]

    func snapshot(_ track: Track? = Fixture.tracks[0], at position: Int64 = 0, paused: Bool = false) -> StateSnapshot {
        Fixture.snapshot(track: track, dj: DJTime(ns: 1_000), positionNs: position, paused: paused)
    }

    @Test func loadsOnlyOnceTheClockIsKnown() {
        var planner = PlaybackPlanner(isEnabled: true)
        #expect(planner.follow(snapshot(), clockKnown: false, now: at(ms: 0)).isEmpty)
        #expect(planner.tick(clockKnown: false, now: at(ms: 10)).isEmpty)
        #expect(planner.loaded == nil && !planner.isPlaying)
        #expect(planner.tick(clockKnown: true, now: at(ms: 20)) == [.load(track, paused: false)])
        #expect(planner.loaded == .init(id: "t0", source: track.source) && planner.isPlaying)
        #expect(planner.tick(clockKnown: true, now: at(ms: 30)).isEmpty)  // once
    }

    @Test func aPauseReachesALoadedPlayerEvenWhileTheClockIsLost() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        // The estimate is gone (the DJ's clock stepped): no resume or seek, but a pause still goes.
        #expect(planner.follow(snapshot(at: 5_000), clockKnown: false, now: at(ms: 100)).isEmpty)
        #expect(planner.follow(snapshot(at: 5_000, paused: true), clockKnown: false, now: at(ms: 200)) == [.pause])
        #expect(planner.follow(snapshot(at: 5_000, paused: true), clockKnown: false, now: at(ms: 300)).isEmpty)
        #expect(planner.follow(snapshot(at: 5_000), clockKnown: true, now: at(ms: 400)) == [.resume])
    }

    @Test func aPausedStationIsLoadedPaused() {
        var planner = PlaybackPlanner(isEnabled: true)
        #expect(
            planner.follow(snapshot(paused: true), clockKnown: true, now: at(ms: 0)) == [.load(track, paused: true)])
        #expect(!planner.isPlaying && planner.isPaused)
    }

    @Test func pauseResumeAndAMovedAnchorRestartThePlayer() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        #expect(planner.follow(snapshot(), clockKnown: true, now: at(ms: 100)).isEmpty)  // nothing changed
        #expect(planner.follow(snapshot(at: 2_000, paused: true), clockKnown: true, now: at(ms: 200)) == [.pause])
        #expect(planner.follow(snapshot(at: 2_000, paused: true), clockKnown: true, now: at(ms: 300)).isEmpty)
        #expect(planner.follow(snapshot(at: 2_000), clockKnown: true, now: at(ms: 400)) == [.resume])
        #expect(planner.follow(snapshot(at: 9_000), clockKnown: true, now: at(ms: 500)) == [.resume])  // a seek
        #expect(planner.isPlaying)
    }

    @Test func aNewTrackOrSourceIsLoadedAndNothingPlayingStops() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        let next = Fixture.tracks[1]
        #expect(planner.follow(snapshot(next), clockKnown: true, now: at(ms: 100)) == [.load(next, paused: false)])
        var moved = next
        moved.source = "http://10.0.0.1/elsewhere"
        #expect(planner.follow(snapshot(moved), clockKnown: true, now: at(ms: 200)) == [.load(moved, paused: false)])
        #expect(planner.follow(snapshot(nil), clockKnown: true, now: at(ms: 300)) == [.stop])
        #expect(planner.loaded == nil)
        #expect(planner.follow(snapshot(nil), clockKnown: true, now: at(ms: 400)).isEmpty)
        #expect(planner.tick(clockKnown: true, now: at(ms: 500)).isEmpty)
    }

    @Test func afterAFailureTheTickRetriesOnlyAfterASecond() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        planner.playerFailed(now: at(ms: 100))
        #expect(planner.loaded == nil)
        #expect(planner.nextRetry == at(ms: 1_100))
        #expect(planner.tick(clockKnown: true, now: at(ms: 1_099)).isEmpty)
        #expect(planner.tick(clockKnown: true, now: at(ms: 1_100)) == [.load(track, paused: false)])
        #expect(planner.nextRetry == nil)
    }

    @Test
    func afterAFailureANewSnapshotDoesNotRetryEarly() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        planner.playerFailed(now: at(ms: 100))
        // The station's next regular snapshot, 400 ms later: same track, same anchor.
        #expect(planner.follow(snapshot(), clockKnown: true, now: at(ms: 500)).isEmpty)
        #expect(planner.tick(clockKnown: true, now: at(ms: 1_100)) == [.load(track, paused: false)])
    }

    @Test func nothingToRetryWhenNothingPlays() {
        var planner = PlaybackPlanner(isEnabled: true)
        _ = planner.follow(snapshot(), clockKnown: true, now: at(ms: 0))
        planner.playerFailed(now: at(ms: 100))
        _ = planner.follow(snapshot(nil), clockKnown: true, now: at(ms: 200))
        #expect(planner.nextRetry == nil)  // a machine would otherwise wake for nothing
    }

    @Test func aDisabledPlannerCommandsNothing() {
        var planner = PlaybackPlanner(isEnabled: false)
        #expect(planner.follow(snapshot(), clockKnown: true, now: at(ms: 0)).isEmpty)
        #expect(planner.tick(clockKnown: true, now: at(ms: 10)).isEmpty)
        #expect(planner.follow(snapshot(at: 1_000, paused: true), clockKnown: true, now: at(ms: 20)).isEmpty)
        #expect(planner.follow(snapshot(nil), clockKnown: true, now: at(ms: 30)).isEmpty)
        planner.playerFailed(now: at(ms: 40))
        #expect(planner.tick(clockKnown: true, now: at(ms: 2_000)).isEmpty)
        #expect(planner.loaded == nil)
    }
}
