import CMpvLoader
import Testing

@testable import PartyRadioMedia

/// Where a level goes: PulseAudio's stream carries it (heard at once) and mpv's own stays at 100;
/// any other output, or none yet, takes mpv's own.
struct PlayerVolumeRouteTests {
    @Test func beforeAnyOutputMpvsOwnVolumeCarriesTheLevel() {
        var route = PlayerVolumeRoute(level: 20)
        #expect(route.settings == (20, nil))
        #expect(route.set(35) == (35, nil))
        #expect(PlayerVolumeRoute(level: 150).level == 100)
        #expect(route.set(-4) == (0, nil))
    }

    @Test func throughPulseAudioTheStreamCarriesItAndMpvStaysAt100() {
        var route = PlayerVolumeRoute(level: 20)
        #expect(route.reopened(as: "pulse")! == (100, 20))
        #expect(route.set(70) == (100, 70))
        // Each new stream is given the level again, in case the loader could not.
        #expect(route.reopened(as: "pulse")! == (100, 70))
        // No output open (between files): as it was.
        #expect(route.reopened(as: nil) == nil)
        #expect(route.set(10) == (100, 10))
    }

    @Test func anotherOutputTakesMpvsOwnAgain() {
        var route = PlayerVolumeRoute(level: 40)
        _ = route.reopened(as: "pulse")
        #expect(route.reopened(as: "alsa")! == (40, nil))
        #expect(route.reopened(as: "alsa") == nil)
        #expect(route.reopened(as: "pipewire") == nil)
        #expect(route.set(90) == (90, nil))
    }

    /// mpv's pulse output turns `ao-volume` into PulseAudio's volume linearly: 100 is PA_VOLUME_NORM.
    @Test func theStreamsVolumeIsPulseAudiosLinearScale() {
        #expect(prmpv_pulse_volume(100) == 0x10000)
        #expect(prmpv_pulse_volume(50) == 0x8000)
        #expect(prmpv_pulse_volume(20) == 13_107)
        #expect(prmpv_pulse_volume(0) == 0)
        #expect(prmpv_pulse_volume(-5) == 0)
        #expect(prmpv_pulse_volume(250) == 0x10000)
    }
}
