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
