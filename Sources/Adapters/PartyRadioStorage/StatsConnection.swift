import CSQLite

/// A failed SQLite call: the (extended) result code and sqlite3_errmsg.
public struct SQLiteFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// `SQLITE_*` result code; the low byte is the primary code.
    public var code: Int32
    public var message: String

    public var description: String { "\(message) (SQLite code \(code))" }

    /// The file is damaged or is not a database at all.
    var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }
}

/// A bare connection with the one call the stats store needs. Used by one thread at a time
/// (the DJ's node thread, or the `stats` command): `@unchecked Sendable` is not claimed.
final class StatsConnection {
    private let handle: OpaquePointer

    init(path: String) throws(SQLiteFailure) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteFailure(code: code, message: message)
        }
        handle = opened
        sqlite3_busy_timeout(handle, 3000)  // `stats` may read while the DJ writes
    }

    deinit { sqlite3_close_v2(handle) }

    /// A value to bind or read back.
    enum Value: Equatable {
        case integer(Int64)
        case text(String)
        case null

        var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    /// Runs one statement of `sql` with `bindings`, returning every row.
    @discardableResult
    func query(_ sql: String, _ bindings: [Value] = []) throws(SQLiteFailure) -> [[Value]] {
        var statement: OpaquePointer?
        var code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw lastError(code) }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in bindings.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let number): code = sqlite3_bind_int64(statement, index, number)
            case .text(let text): code = sqlite3_bind_text(statement, index, text, -1, sqliteTransient)
            case .null: code = sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw lastError(code) }
        }
        var rows: [[Value]] = []
        while true {
            code = sqlite3_step(statement)
            if code == SQLITE_DONE { return rows }
            guard code == SQLITE_ROW else { throw lastError(code) }
            var row: [Value] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
    }

    /// Runs `body` in one transaction: all of it or none.
    func transaction(_ body: () throws(SQLiteFailure) -> Void) throws(SQLiteFailure) {
        try query("BEGIN IMMEDIATE")
        do { try body() } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
        try query("COMMIT")
    }

    private func lastError(_ code: Int32) -> SQLiteFailure {
        SQLiteFailure(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLITE_TRANSIENT is a macro casting -1 to a destructor: "copy the value now".
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
