import Foundation
import Testing

@testable import PartyRadioCore

/// The ordering rule (docs/SPEAKERS.md, "Ordering"), restated: each setting holds the value of the
/// control with the highest ID that named it and was addressed to this speaker (its key, or its
/// room, case ignored); any other control changes nothing.
@Suite struct SpeakerControlStateTests {
    let me = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
    let other = PublicKey(bytes: [UInt8](repeating: 2, count: 32))!

    func control(
        _ id: UInt64, _ fields: SpeakerControl.Fields, volume: Int = 100, muted: Bool = false,
        delay: Int = 0, to target: SpeakerControl.Target? = nil
    ) -> SpeakerControl {
        SpeakerControl(
            controlID: id, target: target ?? .speaker(me), fields: fields,
            settings: SpeakerSettings(volume: volume, muted: muted, delayMs: delay))
    }

    @Test("a later control wins; an earlier one that comes after it changes nothing")
    func laterWins() {
        var state = SpeakerControlState()
        #expect(state.apply(control(20, .volume, volume: 30), key: me, room: "") == .applied(changed: true))
        #expect(state.apply(control(10, .volume, volume: 80), key: me, room: "") == .stale)
        #expect(state.settings.volume == 30)
        #expect(state.apply(control(21, .volume, volume: 30), key: me, room: "") == .applied(changed: false))
        #expect(state.lastControl == 21)
    }

    @Test("per setting: an older control still sets what no newer one set")
    func perSetting() {
        var state = SpeakerControlState()
        _ = state.apply(control(20, .mute, muted: true), key: me, room: "")
        // Sent before the mute, arrived after it: its volume counts, since nothing newer set the volume.
        #expect(state.apply(control(10, .volume, volume: 40), key: me, room: "") == .applied(changed: true))
        #expect(state.settings == SpeakerSettings(volume: 40, muted: true, delayMs: 0))
        #expect(state.settings.playerVolume == 0)
    }

    @Test("another speaker's key, another room or an empty room: not for this speaker")
    func addressing() {
        var state = SpeakerControlState()
        #expect(
            state.apply(control(5, .volume, volume: 1, to: .speaker(other)), key: me, room: "Hall") == .notAddressed)
        #expect(
            state.apply(control(6, .volume, volume: 1, to: .room("Kitchen")), key: me, room: "Hall") == .notAddressed)
        #expect(state.apply(control(7, .volume, volume: 1, to: .room("Hall")), key: me, room: "") == .notAddressed)
        #expect(state.settings.volume == 100)
        #expect(
            state.apply(control(8, .delay, delay: -120, to: .room("hALL")), key: me, room: "Hall")
                == .applied(changed: true))
        #expect(state.settings.delayMs == -120)
    }

    @Test("what it keeps reads back the same (its state directory)")
    func codable() throws {
        var state = SpeakerControlState()
        _ = state.apply(control(9, .all, volume: 20, muted: true, delay: 180), key: me, room: "")
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(SpeakerControlState.self, from: data) == state)
    }
}
