/// What to send for an HTTP `Range` header (RFC 9110 §14) on a resource of a known size.
/// Only single byte ranges are honoured; a header we do not understand (other units, several
/// ranges, bad syntax) is ignored, which the RFC allows, and the whole resource is sent.
public enum ByteRange: Hashable, Sendable {
    /// 200 with the whole resource.
    case full
    /// 206 with bytes `start...end` (inclusive).
    case partial(start: Int64, end: Int64)
    /// 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    public static func resolve(header: String?, size: Int64) -> ByteRange {
        guard let header else { return .full }
        let trimmed = header.trimmingWhitespace()
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "bytes=" else { return .full }
        let spec = String(trimmed.dropFirst(6)).trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .full }
        let first = String(spec[..<dash]).trimmingWhitespace()
        let last = String(spec[spec.index(after: dash)...]).trimmingWhitespace()
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit) else { return .full }

        if first.isEmpty {
            // Suffix range: the last N bytes.
            guard let count = Int64(last) else { return .full }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .partial(start: max(0, size - count), end: size - 1)
        }
        guard let start = Int64(first) else { return .unsatisfiable }  // beyond Int64: beyond the file
        var end = size - 1
        if !last.isEmpty {
            guard let requested = Int64(last) else {
                return start < size ? .partial(start: start, end: size - 1) : .unsatisfiable
            }
            guard requested >= start else { return .full }  // invalid range: ignore the header
            end = min(requested, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .partial(start: start, end: end)
    }

    /// The `Content-Range` value for a partial or unsatisfiable answer.
    public func contentRange(size: Int64) -> String? {
        switch self {
        case .full: nil
        case .partial(let start, let end): "bytes \(start)-\(end)/\(size)"
        case .unsatisfiable: "bytes */\(size)"
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
