/// One line of an HTTP response head, as libcurl hands it to a header callback (status line and
/// fields alike, each with its CRLF). The libcurl adapter's header callback (`CurlHandle`, which the
/// catalog and the listener's media cache fetch through) reads its lines with it.
public enum HTTPHeaderLine: Equatable, Sendable {
    /// `HTTP/1.1 206 Partial Content`: a response begins (after a redirect or a `100 Continue`,
    /// another one follows); the code is 0 when it is not a number.
    case status(Int)
    /// `Content-Range: bytes 0-99/1000`: the name in lower case, the value trimmed.
    case field(name: String, value: String)
    /// The blank line that ends the head, or anything else.
    case other

    public init(_ line: String) {
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            self = .status(parts.count > 1 ? Int(String(parts[1]).trimmingWhitespace()) ?? 0 : 0)
        } else if let colon = line.firstIndex(of: ":") {
            self = .field(
                name: line[..<colon].lowercased(), value: String(line[line.index(after: colon)...]).trimmingWhitespace()
            )
        } else {
            self = .other
        }
    }

    /// The line libcurl passed to a header callback as `data` (`size` × `count` bytes, not
    /// NUL-terminated); invalid UTF-8 is repaired, as everything from the network is untrusted.
    public init(data: UnsafePointer<CChar>, size: Int, count: Int) {
        self.init(String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self))
    }
}
