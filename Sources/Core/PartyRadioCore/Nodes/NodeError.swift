/// Why a node could not run or stopped: a code callers can switch on, a sentence for the user
/// that says what to do, and the underlying cause when there is one.
public struct NodeError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure; each maps to a process exit code (0/1/2/3, see the README).
    public enum Code: String, Sendable, Equatable {
        /// Bad flags or arguments the node only found out about at run time (exit 2).
        case usage
        /// The station was not found, or did not answer in time (exit 3).
        case notFound = "not_found"
        /// The network: no interface, no socket, no multicast (exit 1).
        case network
        /// avahi-daemon is missing or failed (exit 1).
        case discovery
        /// The player could not start (exit 1).
        case player
        /// Files and the state directory (exit 1).
        case storage
        /// The catalog could not be reached or answered badly (exit 1).
        case catalog
        /// The station refused (exit 1).
        case refused
    }

    public let code: Code
    public let description: String
    /// The error this one wraps, for `-v` and for callers that want the detail.
    public let cause: (any Error & Sendable)?

    public init(_ code: Code, _ description: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.description = description
        self.cause = cause
    }

    /// The process exit code for this error.
    public var exitCode: Int32 {
        switch code {
        case .usage: 2
        case .notFound: 3
        default: 1
        }
    }

    public static func notFound(_ description: String) -> NodeError { NodeError(.notFound, description) }
}
