/// A failed system call: what was attempted and the errno it failed with, printed as
/// `bind: Address already in use (EADDRINUSE)`.
///
/// Match on ``code`` (`catch let error as SystemCallError where error.code == .addressInUse`);
/// the errno is the cause, kept whole.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call as the caller named it: `bind`, `setsockopt(IP_ADD_MEMBERSHIP)`.
    public let operation: String
    /// Why it failed.
    public let code: Errno

    public init(_ operation: String, code: Errno) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(operation): \(code)" }
}
