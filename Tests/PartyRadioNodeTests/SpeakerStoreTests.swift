import Foundation
import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// A speaker's `speaker.json`: what the DJ set, and the IDs of the controls that set it, read back
/// by the next run; a file that cannot be read (or holds a value out of range) is the defaults, said.
@Suite struct SpeakerStoreTests {
    @Test func keptAcrossRunsAndABadFileIsTheDefaults() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speaker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SpeakerStore(directory: directory)
        #expect(store.load().0 == SpeakerControlState() && store.load().warning == nil)
        let key = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        var state = SpeakerControlState()
        _ = state.apply(
            SpeakerControl(
                controlID: 42, target: .speaker(key), fields: .all,
                settings: SpeakerSettings(volume: 20, muted: true, delayMs: -180)), key: key, room: "")
        try store.save(state)
        #expect(SpeakerStore(directory: directory).load().0 == state)
        try Data(#"{"settings":{"volume":400,"muted":false,"delayMs":0},"volumeID":1,"muteID":1,"delayID":1}"#.utf8)
            .write(to: store.url)
        let bad = SpeakerStore(directory: directory).load()
        #expect(bad.0 == SpeakerControlState() && bad.warning != nil)
        try Data("not json".utf8).write(to: store.url)
        #expect(SpeakerStore(directory: directory).load().warning != nil)
    }
}
