import PartyRadioCore
import Testing

@testable import PartyRadioNode

/// A speaker's delay trim (docs/SPEAKERS.md): the player's target at any instant is the station's
/// position exactly the trim earlier, so the sound comes exactly that much later; the player's
/// corrections then move it there as they move it after any other jump.
@Suite struct DelayTrimTests {
    let view = StationClockView(
        snapshot: StateSnapshot(
            stationName: "Party",
            nowPlaying: Track(id: "t", title: "T", artist: "A", album: "", durationMs: 600_000, source: "http://x/t"),
            anchor: .playing(at: 10_000_000_000, djTime: DJTime(ns: 5_000_000_000)), tally: Tally(), listenerCount: 0,
            queueLength: 1, queueIndex: 0, sentAtNs: 5_000_000_000),
        estimate: nil, isDJ: true)

    @Test("a trim of +180 ms holds the target 180 ms behind; −500 ms puts it 500 ms ahead; 0 is the station's")
    func exactlyTheTrim() {
        let local: Int64 = 7_000_000_000
        let station = DelayTrimTests().view.stationPosition(at: LocalTime(ns: local))!
        #expect(PlayerDriver.target(view, trimNs: 0, atLocal: local) == station)
        #expect(PlayerDriver.target(view, trimNs: 180_000_000, atLocal: local) == station - 180_000_000)
        #expect(PlayerDriver.target(view, trimNs: -500_000_000, atLocal: local) == station + 500_000_000)
    }
}
