import Foundation
import Testing

@testable import PartyRadioNode

/// `live-drift.json`: the drift a live output learnt, read back by the next run for the same output
/// (server and sink) only; a file that cannot be read or holds a drift beyond the controller's
/// ±1000 ppm is as if there were none.
@Suite struct LiveDriftStoreTests {
    @Test func keptForTheSameOutputOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("drift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = LiveDriftStore(directory: directory)
        let kitchen = LiveDriftStore.output(server: "unix:/run/pulse/native", sink: "kitchen")
        #expect(store.load(output: kitchen) == nil)
        try store.save(output: kitchen, ppm: 341.5)
        #expect(LiveDriftStore(directory: directory).load(output: kitchen) == 341.5)
        // Another sink, another server, or the default of either: another card, maybe.
        #expect(store.load(output: LiveDriftStore.output(server: "unix:/run/pulse/native", sink: "attic")) == nil)
        #expect(store.load(output: LiveDriftStore.output(server: nil, sink: "kitchen")) == nil)
        #expect(store.load(output: LiveDriftStore.output(server: nil, sink: nil)) == nil)
        try store.save(output: kitchen, ppm: -12)
        #expect(store.load(output: kitchen) == -12)
        for bad in [
            #"{"output":"unix:/run/pulse/native|kitchen","ppm":5000}"#, #"{"output":"unix:/run/pulse/native|kitchen"}"#,
            "not json", "",
        ] {
            try Data(bad.utf8).write(to: store.url)
            #expect(store.load(output: kitchen) == nil, "\(bad)")
        }
        #expect(!FileManager.default.fileExists(atPath: store.url.path + ".tmp"))
    }
}
