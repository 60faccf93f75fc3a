import CSQLite
import PartyRadioSQLite

/// Why the DJ's database could not be opened, read or written: a code callers can switch on, a
/// sentence for the user, and the SQLite failure underneath.
public struct DJStoreError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The file is damaged or is not a partyradio database; it is left as it is.
        case corrupt
        /// The file was written by a newer partyradio (a higher schema version); left as it is.
        case newerVersion = "newer_version"
        /// Another process holds the file (a former stats file being taken over while in use).
        case busy
        /// Anything else SQLite refused (permissions, a full disk, a lock held too long).
        case io
    }

    public let code: Code
    public let description: String
    public let cause: SQLiteError?

    init(_ code: Code, _ description: String, cause: SQLiteError? = nil) {
        self.code = code
        self.description = description
        self.cause = cause
    }

    /// `failure` while doing `what` to the file at `path`, told as corruption when it is.
    static func from(_ failure: SQLiteError, _ what: String, path: String) -> DJStoreError {
        if failure.isCorruption {
            return corrupt(path: path, failure.message, cause: failure)
        }
        return DJStoreError(.io, "Cannot \(what) \(path): \(failure).", cause: failure)
    }

    static func corrupt(path: String, _ detail: String, cause: SQLiteError? = nil) -> DJStoreError {
        DJStoreError(
            .corrupt,
            "\(path) is damaged or is not a partyradio DJ database (\(detail)); it was left untouched: move it "
                + "away to start afresh (the stats and the saved station in it are then gone).", cause: cause)
    }
}
