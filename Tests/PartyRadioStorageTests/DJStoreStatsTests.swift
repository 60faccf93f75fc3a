import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioStorage

/// The stats store on real SQLite files in a fresh directory each.
@Suite struct DJStoreTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-stats-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    var path: String { DJStore.path(in: directory) }

    func play(_ id: String, at ns: Int64, up: UInt32 = 0, _ ending: PlayRecord.Ending = .played) -> PlayRecord {
        PlayRecord(
            trackID: id, title: "Title \(id) 'quoted'", artist: "Artist", startedAt: DJTime(ns: ns),
            listenersAtStart: 2, up: up, down: 1, ending: ending)
    }

    @Test func nightsAndPlaysSurviveAReopen() throws {
        do {
            let store = try DJStore(directory: directory)
            let first = try store.beginSession(station: "Rooftop", at: DJTime(ns: 1_000))
            try store.record(play("a", at: 1_100, up: 3), session: first)
            try store.record(play("b", at: 1_200, .djSkip), session: first)
            try store.endSession(first, at: DJTime(ns: 2_000))
            let second = try store.beginSession(station: "Cellar", at: DJTime(ns: 3_000))
            try store.record(play("a", at: 3_100, .crowdSkip), session: second)
        }
        let store = try DJStore(directory: directory)
        let nights = try store.nights()
        #expect(nights.map(\.station) == ["Rooftop", "Cellar"])
        #expect(nights[0].endedAt == DJTime(ns: 2_000) && nights[1].endedAt == nil)
        #expect(nights[0].plays == [play("a", at: 1_100, up: 3), play("b", at: 1_200, .djSkip)])
        #expect(nights[1].plays == [play("a", at: 3_100, .crowdSkip)])
        #expect(try store.nights(latestOnly: true).map(\.station) == ["Cellar"])
        #expect(try store.fileVersion() == DJStore.schemaVersion)
    }

    @Test func aNewFileIsInWALModeAtTheCurrentVersion() throws {
        _ = try DJStore(directory: directory)
        let connection = try SQLiteConnection(path: path)
        #expect(try connection.query("PRAGMA journal_mode").first?.first == .text("wal"))
        #expect(try connection.query("PRAGMA user_version").first?.first == .integer(Int64(DJStore.schemaVersion)))
    }

    @Test func aVersionZeroFileIsMigrated() throws {
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.query("CREATE TABLE unrelated (x)")  // a file of version 0 with something in it
        }
        let store = try DJStore(path: path)
        #expect(try store.fileVersion() == DJStore.schemaVersion)
        #expect(try store.nights().isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorAndLeftUntouched() throws {
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory) }
        #expect(error?.code == .corrupt && error?.description.contains("untouched") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aFileFromANewerVersionIsAnErrorAndLeftUntouched() throws {
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.query("PRAGMA user_version = \(DJStore.schemaVersion + 1)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory) }
        #expect(error?.code == .newerVersion && error?.description.contains("newer partyradio") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
