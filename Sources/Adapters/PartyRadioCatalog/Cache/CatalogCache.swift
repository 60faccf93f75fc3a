import CSQLite
import PartyRadioCore
import PartyRadioSQLite
import Synchronization

/// Catalog responses on disk (SQLite), so a repeated search or lookup answers without the network.
///
/// Each entry is the raw response body with the time it was stored, when it expires and a
/// checksum. A damaged database is never served: it is moved aside (not overwritten, so it can
/// be inspected), a fresh one is started, and ``notices`` say so.
public final class CatalogCache: Sendable {
    public static let fileName = "catalog-cache.sqlite"
    static let schemaVersion: Int64 = 1

    /// What a lookup found.
    public enum Lookup: Equatable, Sendable {
        case miss
        /// A usable entry; `age` in seconds.
        case fresh(body: [UInt8], age: Int)
        /// Past its expiry: not served unless the network is down.
        case expired(body: [UInt8], age: Int)
    }

    public let path: String
    private struct State: ~Copyable {
        var connection: SQLiteConnection?
        var notices: [String] = []
    }
    private let state: Mutex<State>

    /// Opens (or creates) the cache at `path`; a corrupt file is moved aside and replaced.
    /// Throws only when no usable cache can be made there (unwritable directory, newer schema).
    public init(path: String) throws(CatalogError) {
        self.path = path
        var notices: [String] = []
        let connection = try Self.open(path: path, notices: &notices)
        state = Mutex(State(connection: connection, notices: notices))
    }

    /// Opens the cache file in `stateDirectory`, creating the directory when missing.
    public convenience init(stateDirectory: String) throws(CatalogError) {
        guard FileBytes.makeDirectories(stateDirectory) else {
            throw CatalogError(
                .cache, "Cannot create the state directory '\(stateDirectory)'; pass a writable --state-dir.")
        }
        try self.init(path: stateDirectory + "/" + Self.fileName)
    }

    /// Notes about recoveries since the last call (each returned once), for the user to see.
    public func takeNotices() -> [String] {
        state.withLock { state in
            defer { state.notices.removeAll() }
            return state.notices
        }
    }

    /// The entry for `key` at Unix time `now`.
    public func lookup(_ key: String, now: Int) -> Lookup {
        var damaged = false
        let found =
            withConnection { connection throws(SQLiteError) -> Lookup in
                let rows = try connection.query(
                    "SELECT body, stored_at, expires_at, checksum FROM responses WHERE key = ?", [.text(key)])
                guard let row = rows.first, row.count == 4, let body = row[0].blob, let storedAt = row[1].integer,
                    let expiresAt = row[2].integer, let checksum = row[3].integer
                else { return .miss }
                guard checksum == Self.checksum(body) else {
                    // One damaged entry: drop it, keep the rest of the cache.
                    try connection.query("DELETE FROM responses WHERE key = ?", [.text(key)])
                    damaged = true
                    return .miss
                }
                let age = max(0, now - Int(storedAt))
                return Int64(now) < expiresAt ? .fresh(body: body, age: age) : .expired(body: body, age: age)
            } ?? .miss
        if damaged {
            state.withLock {
                $0.notices.append(
                    "A cached answer in \(path) was damaged (checksum mismatch); it was dropped and fetched again.")
            }
        }
        return found
    }

    /// Stores `body` under `key` for `lifetime` seconds; also drops entries long expired.
    public func store(_ key: String, body: [UInt8], now: Int, lifetime: Int) {
        _ = withConnection { connection throws(SQLiteError) -> Bool in
            try connection.query(
                "INSERT OR REPLACE INTO responses (key, body, stored_at, expires_at, checksum) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(key), .blob(body), .integer(Int64(now)), .integer(Int64(now + lifetime)),
                    .integer(Self.checksum(body)),
                ])
            try connection.query("DELETE FROM responses WHERE expires_at < ?", [.integer(Int64(now - 7 * 86_400))])
            return true
        }
    }

    /// Forgets `key` (an entry that no longer decodes).
    public func remove(_ key: String) {
        _ = withConnection { connection throws(SQLiteError) -> Bool in
            try connection.query("DELETE FROM responses WHERE key = ?", [.text(key)])
            return true
        }
    }

    /// Runs `body` on the connection; on corruption moves the file aside, starts afresh and notes it.
    private func withConnection<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) -> T? {
        state.withLock { state -> T? in
            guard let connection = state.connection else { return nil }
            do throws(SQLiteError) {
                return try body(connection)
            } catch {
                if error.isCorruption {
                    state.connection = nil
                    var notices: [String] = []
                    state.connection = try? Self.recover(path: path, reason: error.message, notices: &notices)
                    state.notices += notices
                } else {
                    state.notices.append(
                        "The catalog cache at \(path) could not be used (\(error.message)); answering from the network."
                    )
                }
                return nil
            }
        }
    }

    private static func open(path: String, notices: inout [String]) throws(CatalogError) -> SQLiteConnection {
        do {
            let connection = try SQLiteConnection(path: path)
            try prepare(connection, path: path)
            return connection
        } catch let error as SQLiteError where error.isCorruption {
            return try recover(path: path, reason: error.message, notices: &notices)
        } catch let error as SQLiteError {
            throw CatalogError(
                .cache, "Cannot open the catalog cache at \(path) (\(error.message)); check --state-dir.",
                underlying: error)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.cache, "Cannot open the catalog cache at \(path) (\(error)).", underlying: error)
        }
    }

    private static func recover(path: String, reason: String, notices: inout [String]) throws(CatalogError)
        -> SQLiteConnection
    {
        var suffix = 1
        var aside = path + ".corrupt"
        while FileBytes.exists(aside) {
            suffix += 1
            aside = path + ".corrupt-\(suffix)"
        }
        guard FileBytes.move(path, to: aside) else {
            throw CatalogError(
                .cache, "The catalog cache at \(path) is corrupt (\(reason)) and cannot be moved aside; delete it.")
        }
        for extra in ["-journal", "-wal", "-shm"] where FileBytes.exists(path + extra) {
            _ = FileBytes.move(path + extra, to: aside + extra)
        }
        notices.append(
            "The catalog cache at \(path) was corrupt (\(reason)); it was moved to \(aside) and a new cache started.")
        do {
            let connection = try SQLiteConnection(path: path)
            try prepare(connection, path: path)
            return connection
        } catch let error as SQLiteError {
            throw CatalogError(
                .cache, "Cannot start a new catalog cache at \(path) (\(error.message)).", underlying: error)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.cache, "Cannot start a new catalog cache at \(path) (\(error)).", underlying: error)
        }
    }

    /// Checks the file (quick_check reads every page) and creates the schema when new.
    private static func prepare(_ connection: SQLiteConnection, path: String) throws {
        let check = try connection.query("PRAGMA quick_check")
        if let first = check.first?.first, case .text(let verdict) = first, verdict != "ok" {
            throw SQLiteError(code: SQLITE_CORRUPT, message: verdict)
        }
        let version = try connection.query("PRAGMA user_version").first?.first?.integer ?? 0
        if version > schemaVersion {
            throw CatalogError(
                .cache,
                "The catalog cache at \(path) was written by a newer partyradio; use another --state-dir or delete it.")
        }
        try connection.query(
            """
            CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY NOT NULL,
                body BLOB NOT NULL,
                stored_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                checksum INTEGER NOT NULL
            )
            """)
        try connection.query("PRAGMA user_version = \(schemaVersion)")
    }

    /// FNV-1a, 64 bits: catches bodies damaged on disk that SQLite itself would not notice.
    static func checksum(_ bytes: [UInt8]) -> Int64 {
        Int64(bitPattern: FNV1a64.hash(bytes))
    }
}
