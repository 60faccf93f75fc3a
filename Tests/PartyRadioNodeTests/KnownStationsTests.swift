import Foundation
import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// The listener's list of stations' keys, on disk.
@Suite struct KnownStationsTests {
    @Test func keysAreRememberedAcrossRunsAndBadLinesSkipped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("known-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let b = PublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        #expect(KnownStations(directory: directory).keys.isEmpty)
        try KnownStations(directory: directory).pin("Rooftop", key: a)
        let known = KnownStations(directory: directory)
        #expect(known.keys == ["Rooftop": a])
        try known.pin("Basement 🎶", key: b)
        try known.pin("Rooftop", key: b)
        #expect(KnownStations(directory: directory).keys == ["Rooftop": b, "Basement 🎶": b])
        // A damaged line is skipped, the rest kept.
        let url = directory.appendingPathComponent(KnownStations.fileName)
        try Data(("garbage\n" + (try String(contentsOf: url, encoding: .utf8))).utf8).write(to: url)
        #expect(KnownStations(directory: directory).keys.count == 2)
    }
}
