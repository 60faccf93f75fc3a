import CSQLite

/// Why the stats store could not be opened, read or written: a code callers can switch on, a
/// sentence for the user, and the SQLite failure underneath.
public struct StatsError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The file is damaged or is not a stats database; it is left as it is.
        case corrupt
        /// The file was written by a newer partyradio (a higher schema version); left as it is.
        case newerVersion = "newer_version"
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
    static func from(_ failure: SQLiteError, _ what: String, path: String) -> StatsError {
        if failure.isCorruption {
            return StatsError(
                .corrupt,
                "\(path) is damaged or is not a partyradio stats database (\(failure.message)); it was left "
                    + "untouched: move it away to start new stats.", cause: failure)
        }
        return StatsError(.io, "Cannot \(what) \(path): \(failure).", cause: failure)
    }
}
