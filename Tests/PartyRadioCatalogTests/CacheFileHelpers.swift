import CSQLite
import Foundation

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func readFile(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Flips a byte in every cached body behind the cache's back, as a bad disk would.
func damageEveryBody(_ path: String) throws {
    var database: OpaquePointer?
    guard sqlite3_open(path, &database) == SQLITE_OK else { throw CocoaError(.fileReadCorruptFile) }
    defer { sqlite3_close(database) }
    let sql = "UPDATE responses SET body = CAST(replace(CAST(body AS TEXT), 'Beyonc', 'Bxyonc') AS BLOB)"
    guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else { throw CocoaError(.fileWriteUnknown) }
}
