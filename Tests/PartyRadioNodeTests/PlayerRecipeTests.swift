import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// The player's settings the node derives from its environment (the benchmarks' knobs).
@Suite("Player recipe: mpv options and the corrector's settings")
struct PlayerRecipeTests {
    @Test("mpv options: pulse-latency-hacks by default, PARTYRADIO_MPV_OPTIONS adds or replaces")
    func mpvOptions() {
        #expect(PlayerMaker.Recipe.mpvOptions(mediaProof: nil) == ["pulse-latency-hacks": "yes"])
        let options = PlayerMaker.Recipe.mpvOptions(
            mediaProof: nil,
            environment: ["PARTYRADIO_MPV_OPTIONS": "pulse-latency-hacks=no,ao=alsa,audio-device=alsa/pulse"])
        #expect(options == ["pulse-latency-hacks": "no", "ao": "alsa", "audio-device": "alsa/pulse"])
    }

    @Test("PulseAudio's request: every 50 ms unless PARTYRADIO_PULSE_REQUEST_MS, a share of the buffer")
    func pulseRequest() {
        let shipped = PlayerMaker.Recipe.mpvOptions(mediaProof: nil)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped) == 500)
        // Of mpv's 100 ms buffer when no option sets one; more than half the buffer is half.
        let every40 = ["PARTYRADIO_PULSE_REQUEST_MS": "40"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: every40) == 400)
        let most = ["PARTYRADIO_PULSE_REQUEST_MS": "1000"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: most) == 500)
        // Another buffer (PARTYRADIO_MPV_OPTIONS): the same request is a smaller share of it.
        let longer = PlayerMaker.Recipe.mpvOptions(
            mediaProof: nil, environment: ["PARTYRADIO_MPV_OPTIONS": "pulse-buffer=200"])
        let every100 = ["PARTYRADIO_PULSE_REQUEST_MS": "100"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: longer, environment: every100) == 500)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: longer, environment: every40) == 200)
        // "native" has no length; 0 and below leave it to the server; nonsense is the default.
        #expect(
            PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: ["pulse-buffer": "native"], environment: every40) == 0)
        for off in ["0", "-5"] {
            #expect(
                PlayerMaker.Recipe.pulseRequestPermille(
                    mpvOptions: shipped, environment: ["PARTYRADIO_PULSE_REQUEST_MS": off]) == 0)
        }
        #expect(
            PlayerMaker.Recipe.pulseRequestPermille(
                mpvOptions: shipped, environment: ["PARTYRADIO_PULSE_REQUEST_MS": "fast"]) == 500)
    }

    @Test("PulseAudio timing reports: reused for 250 ms unless PARTYRADIO_PULSE_TIMING_MS (0-1000) says")
    func pulseTimingReuse() {
        #expect(PlayerMaker.Recipe.pulseTimingReuseMs() == 250)
        #expect(PlayerMaker.Recipe.pulseTimingReuseMs(environment: ["PARTYRADIO_PULSE_TIMING_MS": "0"]) == 0)
        #expect(PlayerMaker.Recipe.pulseTimingReuseMs(environment: ["PARTYRADIO_PULSE_TIMING_MS": "100"]) == 100)
        for nonsense in ["-1", "1001", "soon", ""] {
            #expect(
                PlayerMaker.Recipe.pulseTimingReuseMs(environment: ["PARTYRADIO_PULSE_TIMING_MS": nonsense]) == 250)
        }
    }
}
