import Glibc

/// A failed system call: its name and errno, printed as e.g. `bind: Address already in use (EADDRINUSE)`.
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32

    public init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Runs a system call, retrying on EINTR (the one place that does), and turns -1 into an error.
@discardableResult
func syscall<T: FixedWidthInteger>(_ name: String, _ body: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        if errno == EINTR { continue }
        throw SystemCallError(name)
    }
}
