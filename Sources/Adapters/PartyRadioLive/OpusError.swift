import COpus

/// A libopus call that failed: the call, libopus's code and its sentence.
public struct OpusError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call) failed: \(String(cString: opus_strerror(code))) (\(code))" }
}
