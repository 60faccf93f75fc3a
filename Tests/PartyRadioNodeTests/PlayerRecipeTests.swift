import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// The player's settings the node derives from its ``PlayerTuning`` (the benchmarks' switches;
/// EnvironmentKnobsTests check how the environment sets them).
@Suite("Player recipe: mpv options and PulseAudio's request")
struct PlayerRecipeTests {
    @Test("mpv options: pulse-latency-hacks by default, the tuning's options add or replace")
    func mpvOptions() {
        #expect(PlayerMaker.Recipe.mpvOptions(mediaProof: nil) == ["pulse-latency-hacks": "yes"])
        let options = PlayerMaker.Recipe.mpvOptions(
            mediaProof: nil, extra: ["pulse-latency-hacks": "no", "ao": "alsa", "audio-device": "alsa/pulse"])
        #expect(options == ["pulse-latency-hacks": "no", "ao": "alsa", "audio-device": "alsa/pulse"])
        let proved = PlayerMaker.Recipe.mpvOptions(mediaProof: "p", extra: ["ao": "alsa"])
        #expect(proved["http-header-fields"]?.hasSuffix(": p") == true && proved["ao"] == "alsa")
    }

    @Test("PulseAudio's request: every 50 ms by default, a share of the buffer, at most half")
    func pulseRequest() {
        let shipped = PlayerMaker.Recipe.mpvOptions(mediaProof: nil)
        #expect(
            PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, requestMs: PlayerTuning().pulseRequestMs)
                == 500)
        // Of mpv's 100 ms buffer when no option sets one; more than half the buffer is half.
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, requestMs: 40) == 400)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, requestMs: 1000) == 500)
        // Another buffer: the same request is a smaller share of it.
        let longer = PlayerMaker.Recipe.mpvOptions(mediaProof: nil, extra: ["pulse-buffer": "200"])
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: longer, requestMs: 100) == 500)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: longer, requestMs: 40) == 200)
        // "native" has no length; 0 leaves it to the server.
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: ["pulse-buffer": "native"], requestMs: 40) == 0)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, requestMs: 0) == 0)
    }

    @Test("The shipped tuning: cache, partial files, page release on; 50 ms requests, reports reused 250 ms")
    func shippedTuning() {
        let tuning = PlayerTuning()
        #expect(tuning.mediaCache && tuning.playsPartialFiles && tuning.releasesStartupPages)
        #expect(tuning.mpvOptions.isEmpty && tuning.pulseRequestMs == 50 && tuning.pulseTimingReuseMs == 250)
    }
}
