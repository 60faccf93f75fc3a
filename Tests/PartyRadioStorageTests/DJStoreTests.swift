import Foundation
import PartyRadioCore
import PartyRadioSQLite
import Testing

@testable import PartyRadioStorage

/// The test process's own folder under the temporary directory: every scratch folder of these
/// tests is made inside it, and it is removed when the process exits, so runs leave nothing behind.
let storageScratchRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-storage")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-storage")
        try? FileManager.default.removeItem(at: url)
    }
    return url
}()

/// The DJ's database: its stats, its schema and its file, on real SQLite files in a fresh directory each.
@Suite struct DJStoreTests {
    let directory: URL = {
        let url = storageScratchRoot.appendingPathComponent("partyradio-stats-\(UUID().uuidString)")
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
    var formerPath: String { directory.appendingPathComponent(DJStore.formerFileName).path }

    /// A stats file exactly as partyradio wrote it before the station was saved (schema 1).
    func writeVersionOneFile() throws {
        let connection = try SQLiteConnection(path: formerPath)
        try connection.query("PRAGMA journal_mode = WAL")
        for statement in [
            """
            CREATE TABLE sessions (
                id INTEGER PRIMARY KEY, station TEXT NOT NULL, started_ns INTEGER NOT NULL, ended_ns INTEGER)
            """,
            """
            CREATE TABLE plays (
                id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
                track_id TEXT NOT NULL, title TEXT NOT NULL, artist TEXT NOT NULL, started_ns INTEGER NOT NULL,
                listeners INTEGER NOT NULL, up INTEGER NOT NULL, down INTEGER NOT NULL, ending TEXT NOT NULL)
            """,
            "CREATE INDEX plays_by_session ON plays(session_id, started_ns)",
            "PRAGMA user_version = 1",
            "INSERT INTO sessions VALUES (1, 'Rooftop', 1000, 2000)",
            "INSERT INTO plays VALUES (1, 1, 'a', 'Title a ''quoted''', 'Artist', 1100, 2, 3, 1, 'played')",
            "INSERT INTO plays VALUES (2, 1, 'b', 'Title b ''quoted''', 'Artist', 1200, 2, 0, 1, 'dj_skip')",
        ] {
            try connection.query(statement)
        }
    }

    @Test func aVersionOneStatsFileIsTakenOverAndMigrated() throws {
        try writeVersionOneFile()
        let store = try DJStore(directory: directory)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: formerPath))
        #expect(!FileManager.default.fileExists(atPath: formerPath + "-wal"))
        #expect(try store.fileVersion() == 3 && DJStore.schemaVersion == 3)
        let nights = try store.nights()
        #expect(nights.map(\.station) == ["Rooftop"] && nights.first?.endedAt == DJTime(ns: 2_000))
        #expect(nights.first?.plays == [play("a", at: 1_100, up: 3), play("b", at: 1_200, .djSkip)])
        #expect(try store.loadStation() == nil)
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func aDamagedFormerFileIsAnErrorAndStaysWhereItWas() throws {
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try garbage.write(to: URL(fileURLWithPath: formerPath))
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory) }
        #expect(error?.code == .corrupt && error?.description.contains(DJStore.formerFileName) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: formerPath)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFormerFileFromANewerVersionIsAnErrorAndStaysWhereItWas() throws {
        try writeVersionOneFile()
        try SQLiteConnection(path: formerPath).query("PRAGMA user_version = \(DJStore.schemaVersion + 1)")
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory) }
        #expect(error?.code == .newerVersion)
        #expect(FileManager.default.fileExists(atPath: formerPath) && !FileManager.default.fileExists(atPath: path))
    }

    @Test func withBothFilesTheDJDatabaseIsUsedAndTheOldOneLeftAlone() throws {
        try writeVersionOneFile()
        do {
            let store = try DJStore(path: path)
            _ = try store.beginSession(station: "Cellar", at: DJTime(ns: 5))
        }
        let store = try DJStore(directory: directory)
        #expect(try store.nights().map(\.station) == ["Cellar"])
        #expect(FileManager.default.fileExists(atPath: formerPath))
    }

    @Test func whoRequestedAPlayIsKept() throws {
        let store = try DJStore(directory: directory)
        let night = try store.beginSession(station: "Rooftop", at: DJTime(ns: 1))
        var requested = play("r", at: 10)
        requested.requestedBy = "Ann 'the guest'"
        try store.record(requested, session: night)
        try store.record(play("a", at: 20), session: night)
        #expect(try DJStore(directory: directory).nights().first?.plays.map(\.requestedBy) == ["Ann 'the guest'", nil])
    }

    @Test func aKilledDJsNightCarriesOnAnEndedOneDoesNot() throws {
        let store = try DJStore(directory: directory)
        let first = try store.beginSession(station: "Rooftop", at: DJTime(ns: 1))
        #expect(try store.unfinishedSession(station: "Rooftop") == first)
        #expect(try store.unfinishedSession(station: "Cellar") == nil)
        try store.endSession(first, at: DJTime(ns: 2))
        #expect(try store.unfinishedSession(station: "Rooftop") == nil)
    }
}
