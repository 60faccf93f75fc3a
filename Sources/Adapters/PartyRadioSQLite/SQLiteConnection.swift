import CSQLite

/// A failed SQLite call: the (extended) result code and sqlite3_errmsg (the cause kept by the
/// catalog cache's and the DJ store's errors).
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `SQLITE_*` result code; the low byte is the primary code.
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (SQLite code \(code))" }

    /// The file is damaged or is not a database at all.
    package var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }
}

/// A bare connection with the few calls the catalog cache and the DJ store need. Not
/// thread-safe on its own: `@unchecked Sendable` because the cache only ever touches it inside
/// its `Mutex` (the DJ store is used by one thread).
package final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Prepared statements by their SQL, kept for the next call (a DJ's save runs the same few
    /// statements dozens of times; preparing one costs more than running it).
    private var statements: [String: OpaquePointer] = [:]

    package init(path: String) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteError(code: code, message: message)
        }
        handle = opened
        sqlite3_busy_timeout(handle, 3000)  // the DJ and a CLI command may share the cache
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// A value to bind or read back.
    package enum Value: Equatable {
        case integer(Int64)
        case text(String)
        case blob([UInt8])
        case null
    }

    /// Runs `sql` with `bindings`, returning every row.
    @discardableResult
    package func query(_ sql: String, _ bindings: [Value] = []) throws(SQLiteError) -> [[Value]] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var code = SQLITE_OK
        for (offset, value) in bindings.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let number): code = sqlite3_bind_int64(statement, index, number)
            case .text(let text): code = sqlite3_bind_text(statement, index, text, -1, sqliteTransient)
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(
                        statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count),
                        sqliteTransient)
                }
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
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let pointer = sqlite3_column_blob(statement, column)
                    row.append(.blob(pointer.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
    }

    /// The statement for `sql`, prepared once.
    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw lastError(code)
        }
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one transaction: all of it or none.
    package func transaction(_ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try query("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            try body()
            try query("COMMIT")
        } catch {
            // A failed COMMIT leaves the transaction open: end it, so the next one can begin.
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    private func lastError(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLITE_TRANSIENT is a macro casting -1 to a destructor: "copy the value now".
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension SQLiteConnection.Value {
    package var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    package var text: String? { if case .text(let value) = self { value } else { nil } }
    package var blob: [UInt8]? {
        switch self {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: nil
        }
    }
}
