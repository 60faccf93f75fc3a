import CSQLite
import Foundation
import PartyRadioCore
import PartyRadioSQLite

/// The DJ's one database, `dj.sqlite` in the state directory: its stats (one `sessions` row per DJ
/// run, a "night", and one `plays` row per finished play) and its saved station (queue, position,
/// votes, requests, chat), so that a DJ killed at any moment starts again where it was.
///
/// WAL mode with `synchronous = NORMAL`: a commit survives the process being killed, and
/// `partyradio stats` reads while a DJ writes. The schema version is SQLite's `user_version`;
/// older files are migrated in place, one transaction per version, and a `stats.sqlite` left by
/// an older partyradio is taken over (checked, checkpointed, renamed). A damaged file, or one from
/// a newer partyradio, is an error and is never reset or written to.
///
/// Not thread-safe: the DJ's node thread (or the `stats` command) alone holds it.
public final class DJStore {
    public static let fileName = "dj.sqlite"
    /// The file the stats lived in before the station was saved too (schema version 1).
    public static let formerFileName = "stats.sqlite"

    /// Each entry takes the schema from its index to the next version; the count is the version
    /// this build writes. Never edit an entry that has shipped: add one.
    static let migrations: [[String]] = [
        // 1: the stats.
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
        ],
        // 2: who requested a play, and the saved station.
        [
            "ALTER TABLE plays ADD COLUMN requested_by TEXT",
            """
            CREATE TABLE station (
                id INTEGER PRIMARY KEY CHECK (id = 1), queue_index INTEGER NOT NULL, position_ns INTEGER NOT NULL,
                paused INTEGER NOT NULL, repeat_mode TEXT NOT NULL, volume INTEGER NOT NULL, interlude TEXT,
                saved_at_ns INTEGER NOT NULL, stopped INTEGER NOT NULL DEFAULT 0)
            """,
            """
            CREATE TABLE station_queue (
                position INTEGER PRIMARY KEY, track_id TEXT NOT NULL, title TEXT NOT NULL, artist TEXT NOT NULL,
                album TEXT NOT NULL, duration_ms INTEGER NOT NULL, source TEXT NOT NULL)
            """,
            "CREATE TABLE station_books (name TEXT PRIMARY KEY, json TEXT NOT NULL)",
            "CREATE TABLE station_ports (name TEXT PRIMARY KEY, port INTEGER NOT NULL)",
        ],
        // 3: the votes a row per voter (a save writes the voters that changed, not the whole book);
        // a file's "votes" book moves into it at its next save.
        [
            """
            CREATE TABLE station_voters (
                voter TEXT PRIMARY KEY, choice TEXT, addresses TEXT NOT NULL, sequence INTEGER)
            """
        ],
    ]
    public static var schemaVersion: Int { migrations.count }

    public let path: String
    let connection: SQLiteConnection
    /// The station as the file holds it, so a save writes only the sections that changed.
    var written: SavedStation?
    /// The voters' rows as `station_voters` holds them (and the track they are on), so a save
    /// writes only the voters that changed since; nil when the file's votes are not in rows (an
    /// older file's "votes" book, nothing saved yet), so the next save writes every voter. Set
    /// only once a save's transaction has committed (or from what a load read).
    var writtenVoters: WrittenVoters?

    struct WrittenVoters {
        var trackID: String?
        var rows: [PublicKey: VoteBook.Voter]
    }

    /// The database's file in `directory`.
    public static func path(in directory: URL) -> String {
        directory.appendingPathComponent(fileName).path
    }

    /// Whether `directory` holds a DJ database (or a former stats file that would become one).
    public static func exists(in directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: path(in: directory))
            || FileManager.default.fileExists(atPath: directory.appendingPathComponent(formerFileName).path)
    }

    /// Opens (creating if need be) the database in `directory`, taking over a former
    /// `stats.sqlite`, and brings an older schema up to date.
    public convenience init(directory: URL) throws(DJStoreError) {
        let path = Self.path(in: directory)
        let former = directory.appendingPathComponent(Self.formerFileName).path
        if !FileManager.default.fileExists(atPath: path) && FileManager.default.fileExists(atPath: former) {
            try Self.takeOver(former, as: path)
        }
        try self.init(path: path)
    }

    public init(path: String) throws(DJStoreError) {
        self.path = path
        // SQLite takes an empty file for an empty database and would make a fresh one in it: a
        // dj.sqlite that lost its bytes (truncated, a copy that failed) is told like a damaged one.
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == 0 {
            throw DJStoreError.corrupt(path: path, "the file is empty (0 bytes)")
        }
        connection = try Self.open(path)
        let version = try Self.checkedVersion(connection, path: path)
        do throws(SQLiteError) {
            try connection.query("PRAGMA journal_mode = WAL")
            // In WAL mode NORMAL loses nothing committed when the process dies (only on power loss).
            try connection.query("PRAGMA synchronous = NORMAL")
            try connection.query("PRAGMA foreign_keys = ON")
            for target in version..<Self.schemaVersion {
                try connection.transaction { () throws(SQLiteError) in
                    for statement in Self.migrations[target] { try connection.query(statement) }
                    try connection.query("PRAGMA user_version = \(target + 1)")
                }
            }
        } catch {
            throw DJStoreError.from(error, "set up", path: path)
        }
    }

    /// The schema version of the open file (after migration: ``schemaVersion``).
    public func fileVersion() throws(DJStoreError) -> Int {
        do throws(SQLiteError) {
            return Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
    }

    /// Folds the write-ahead log into the file and empties it (`wal_checkpoint(TRUNCATE)`), so that
    /// `dj.sqlite` alone holds everything: a copy of it after the DJ quits is whole. Done on a clean
    /// quit; a killed DJ's log is folded in when the file is next opened.
    public func checkpoint() throws(DJStoreError) {
        do throws(SQLiteError) { try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    /// `PRAGMA integrity_check`'s verdict: "ok", or what is wrong.
    public func integrityCheck() throws(DJStoreError) -> String {
        do throws(SQLiteError) {
            let rows = try connection.query("PRAGMA integrity_check")
            return rows.compactMap { $0.first?.text }.joined(separator: "; ")
        } catch {
            throw DJStoreError.from(error, "check", path: path)
        }
    }

    private static func open(_ path: String) throws(DJStoreError) -> SQLiteConnection {
        do throws(SQLiteError) { return try SQLiteConnection(path: path) } catch {
            throw DJStoreError.from(error, "open", path: path)
        }
    }

    /// The file's schema version, read before anything writes: a file we cannot understand (damaged,
    /// or from a newer partyradio) must stay as it is.
    private static func checkedVersion(_ connection: SQLiteConnection, path: String) throws(DJStoreError) -> Int {
        let version: Int
        do throws(SQLiteError) {
            version = Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
            let check = try connection.query("PRAGMA quick_check").first?.first?.text
            guard check == "ok" else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: check ?? "quick_check gave no answer")
            }
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
        guard version <= schemaVersion else {
            throw DJStoreError(
                .newerVersion,
                "\(path) was written by a newer partyradio (schema \(version); this one knows up to "
                    + "\(schemaVersion)); it was left untouched: update partyradio to use it.")
        }
        return version
    }

    /// Makes the former stats file `former` the database at `path`: checked like any file, its
    /// write-ahead log folded in, then renamed (a rename within one folder is atomic). If anything
    /// fails, the former file stays where and as it was.
    private static func takeOver(_ former: String, as path: String) throws(DJStoreError) {
        do {
            let connection = try open(former)
            _ = try checkedVersion(connection, path: former)
            let busy: Bool
            do throws(SQLiteError) {
                busy = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)").first?.first?.integer != 0
            } catch {
                throw DJStoreError.from(error, "read", path: former)
            }
            if busy {
                throw DJStoreError(
                    .busy,
                    "\(former) is in use by another partyradio; stop it, then start again (the file becomes "
                        + "\(fileName)).")
            }
        }  // closed here: the log is empty and goes with the last connection
        for suffix in ["-wal", "-shm"] {
            let side = former + suffix
            let size = (try? FileManager.default.attributesOfItem(atPath: side)[.size] as? Int) ?? 0
            if size == 0 { try? FileManager.default.removeItem(atPath: side) }
        }
        guard rename(former, path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw DJStoreError(.io, "Cannot rename \(former) to \(path): \(reason).")
        }
    }
}
