/// libcurl's own account of a failed transfer: the `CURLcode` and the text of its error buffer (or,
/// when libcurl cannot be used at all, why not). What the catalog keeps as the cause of its
/// transfer errors, and what the media cache counts and reports.
public struct CurlFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `CURLcode` (stable ABI values: 6 is `CURLE_COULDNT_RESOLVE_HOST`, 28 a timeout).
    public var code: Int
    /// What libcurl wrote in its error buffer; may be empty.
    public var detail: String

    public init(code: Int, detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? "curl error \(code)" : "curl error \(code): \(detail)" }
}
