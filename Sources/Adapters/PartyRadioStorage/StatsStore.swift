import CSQLite
import Foundation
import PartyRadioCore

/// The DJ's stats, kept across runs in `stats.sqlite` in the state directory: one row per DJ run
/// (`sessions`, a "night") and one per finished play (`plays`). WAL mode, so `partyradio stats`
/// can read while a DJ writes; the schema version is SQLite's `user_version`, and older files are
/// migrated in place. A damaged file, or one from a newer partyradio, is an error and is never
/// reset or written to.
public final class StatsStore {
    public static let fileName = "stats.sqlite"

    /// Each entry takes the schema from its index to the next version; the count is the version
    /// this build writes.
    static let migrations: [[String]] = [
        [
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
        ]
    ]
    public static var schemaVersion: Int { migrations.count }

    public let path: String
    private let connection: SQLiteConnection

    /// The store's file in `directory`.
    public static func path(in directory: URL) -> String {
        directory.appendingPathComponent(fileName).path
    }

    /// Opens (creating if need be) the store in `directory` and brings an older schema up to date.
    public convenience init(directory: URL) throws(StatsError) {
        try self.init(path: Self.path(in: directory))
    }

    public init(path: String) throws(StatsError) {
        self.path = path
        do throws(SQLiteError) { connection = try SQLiteConnection(path: path) } catch {
            throw StatsError.from(error, "open", path: path)
        }
        // Read before anything writes: a file we cannot understand must stay as it is.
        let version: Int
        do throws(SQLiteError) {
            version = Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
            let check = try connection.query("PRAGMA quick_check").first?.first?.text
            guard check == "ok" else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: check ?? "quick_check gave no answer")
            }
        } catch {
            throw StatsError.from(error, "read", path: path)
        }
        guard version <= Self.schemaVersion else {
            throw StatsError(
                .newerVersion,
                "\(path) was written by a newer partyradio (stats schema \(version); this one knows up to "
                    + "\(Self.schemaVersion)); it was left untouched: update partyradio to read it.")
        }
        do throws(SQLiteError) {
            try connection.query("PRAGMA journal_mode = WAL")
            try connection.query("PRAGMA foreign_keys = ON")
            for target in version..<Self.schemaVersion {
                try connection.transaction { () throws(SQLiteError) in
                    for statement in Self.migrations[target] { try connection.query(statement) }
                    try connection.query("PRAGMA user_version = \(target + 1)")
                }
            }
        } catch {
            throw StatsError.from(error, "set up", path: path)
        }
    }

    /// The schema version of the open file (after migration: ``schemaVersion``).
    public func fileVersion() throws(StatsError) -> Int {
        do throws(SQLiteError) {
            return Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
        } catch {
            throw StatsError.from(error, "read", path: path)
        }
    }

    // MARK: Writing (the DJ)

    /// A DJ run starts: returns its session's id, for ``record(_:session:)`` and ``endSession(_:at:)``.
    public func beginSession(station: String, at started: DJTime) throws(StatsError) -> Int64 {
        do throws(SQLiteError) {
            return try connection.query(
                "INSERT INTO sessions (station, started_ns) VALUES (?, ?) RETURNING id",
                [.text(station), .integer(started.ns)]
            ).first?.first?.integer ?? 0
        } catch {
            throw StatsError.from(error, "write to", path: path)
        }
    }

    public func endSession(_ session: Int64, at ended: DJTime) throws(StatsError) {
        do throws(SQLiteError) {
            try connection.query(
                "UPDATE sessions SET ended_ns = ? WHERE id = ?", [.integer(ended.ns), .integer(session)])
        } catch {
            throw StatsError.from(error, "write to", path: path)
        }
    }

    /// Keeps one finished play of `session`.
    public func record(_ play: PlayRecord, session: Int64) throws(StatsError) {
        do throws(SQLiteError) {
            try connection.query(
                """
                INSERT INTO plays (session_id, track_id, title, artist, started_ns, listeners, up, down, ending)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(session), .text(play.trackID), .text(play.title), .text(play.artist),
                    .integer(play.startedAt.ns), .integer(Int64(play.listenersAtStart)), .integer(Int64(play.up)),
                    .integer(Int64(play.down)), .text(play.ending.rawValue),
                ])
        } catch {
            throw StatsError.from(error, "write to", path: path)
        }
    }

    // MARK: Reading (`partyradio stats`)

    /// Every night (DJ run), oldest first, with its plays in order; `latestOnly`: the last one.
    public func nights(latestOnly: Bool = false) throws(StatsError) -> [Night] {
        let sessions =
            "SELECT id, station, started_ns, ended_ns FROM sessions ORDER BY id" + (latestOnly ? " DESC LIMIT 1" : "")
        let plays = """
            SELECT track_id, title, artist, started_ns, listeners, up, down, ending
            FROM plays WHERE session_id = ? ORDER BY started_ns, id
            """
        do throws(SQLiteError) {
            var nights: [Night] = []
            for row in try connection.query(sessions) {
                let id = row[0].integer ?? 0
                var night = Night(
                    id: id, station: row[1].text ?? "", startedAt: DJTime(ns: row[2].integer ?? 0),
                    endedAt: row[3].integer.map(DJTime.init(ns:)), plays: [])
                for p in try connection.query(plays, [.integer(id)]) {
                    night.plays.append(
                        PlayRecord(
                            trackID: p[0].text ?? "", title: p[1].text ?? "", artist: p[2].text ?? "",
                            startedAt: DJTime(ns: p[3].integer ?? 0), listenersAtStart: Int(p[4].integer ?? 0),
                            up: UInt32(clamping: p[5].integer ?? 0), down: UInt32(clamping: p[6].integer ?? 0),
                            ending: PlayRecord.Ending(rawValue: p[7].text ?? "") ?? .played))
                }
                nights.append(night)
            }
            return nights
        } catch {
            throw StatsError.from(error, "read", path: path)
        }
    }

    /// One DJ run and what it played.
    public struct Night: Sendable, Equatable {
        public var id: Int64
        public var station: String
        public var startedAt: DJTime
        /// Nil while the DJ runs (or if it crashed).
        public var endedAt: DJTime?
        public var plays: [PlayRecord]
    }
}
