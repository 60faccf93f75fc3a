import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// The player's settings the node derives from its environment (the benchmarks' knobs).
@Suite("Player recipe: mpv options and the corrector's settings")
struct PlayerRecipeTests {
    @Test("mpv options: pulse-latency-hacks by default, PARTYRADIO_MPV_OPTIONS adds or replaces")
    func mpvOptions() {
        #expect(
            PlayerMaker.Recipe.mpvOptions(mediaProof: nil) == ["pulse-latency-hacks": "yes", "pulse-buffer": "200"])
        let options = PlayerMaker.Recipe.mpvOptions(
            mediaProof: nil,
            environment: ["PARTYRADIO_MPV_OPTIONS": "pulse-latency-hacks=no,ao=alsa,audio-device=alsa/pulse"])
        #expect(
            options == ["pulse-latency-hacks": "no", "pulse-buffer": "200", "ao": "alsa", "audio-device": "alsa/pulse"])
    }

    @Test("PulseAudio asks for audio every 100 ms: half the 200 ms buffer, unless PARTYRADIO_PULSE_REQUEST_MS")
    func pulseRequest() {
        let shipped = PlayerMaker.Recipe.mpvOptions(mediaProof: nil)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped) == 500)
        let every50 = ["PARTYRADIO_PULSE_REQUEST_MS": "50"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: every50) == 250)
        // 0 leaves it to the server; more than half the buffer is half.
        let off = ["PARTYRADIO_PULSE_REQUEST_MS": "0"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: off) == 0)
        let most = ["PARTYRADIO_PULSE_REQUEST_MS": "1000"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: most) == 500)
        // Another buffer (PARTYRADIO_MPV_OPTIONS) keeps the request at 100 ms; "native" has no length.
        let longer = PlayerMaker.Recipe.mpvOptions(
            mediaProof: nil, environment: ["PARTYRADIO_MPV_OPTIONS": "pulse-buffer=400"])
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: longer) == 250)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: ["pulse-buffer": "native"]) == 0)
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: [:]) == 0)
        let nonsense = ["PARTYRADIO_PULSE_REQUEST_MS": "fast"]
        #expect(PlayerMaker.Recipe.pulseRequestPermille(mpvOptions: shipped, environment: nonsense) == 500)
    }

    @Test("the corrector keeps its defaults unless PARTYRADIO_SYNC_CONFIRM_MS says otherwise")
    func correctorConfiguration() {
        #expect(PlayerMaker.Recipe.correctorConfiguration() == PlaybackCorrector.Configuration())
        let longer = PlayerMaker.Recipe.correctorConfiguration(environment: ["PARTYRADIO_SYNC_CONFIRM_MS": "4000"])
        var expected = PlaybackCorrector.Configuration()
        expected.confirmNs = 4 * Nanos.perSecond
        #expect(longer == expected)
        for nonsense in ["", "-5", "4 s", "abc"] {
            #expect(
                PlayerMaker.Recipe.correctorConfiguration(environment: ["PARTYRADIO_SYNC_CONFIRM_MS": nonsense])
                    == PlaybackCorrector.Configuration())
        }
    }
}
