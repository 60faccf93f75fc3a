import PartyRadioCore
import PartyRadioCurl

/// Maps a failed transfer to a sentence a user can act on. Pure: takes libcurl's numeric
/// `CURLcode` (stable ABI values), so every branch is unit-tested without a network.
public enum TransferFailure {
    public static func error(curlCode code: Int, url: String, detail: String, timeout: Double) -> CatalogError {
        var error = classify(curlCode: code, url: url, detail: detail, timeout: timeout)
        error.underlying = CurlFailure(code: code, detail: detail)
        return error
    }

    private static func classify(curlCode code: Int, url: String, detail: String, timeout: Double) -> CatalogError {
        let host = hostPort(of: url)
        let said = detail.isEmpty ? "" : " (\(detail))"
        switch code {
        case 6:  // CURLE_COULDNT_RESOLVE_HOST
            return CatalogError(
                .dns, "Cannot resolve '\(host)'; check your network connection, DNS, or the base URL.")
        case 5:  // CURLE_COULDNT_RESOLVE_PROXY
            return CatalogError(.dns, "Cannot resolve the proxy for '\(host)'; check the proxy environment variables.")
        case 7:  // CURLE_COULDNT_CONNECT
            return CatalogError(
                .connect, "Cannot connect to \(host)\(said); check your network connection or the base URL.")
        case 28:  // CURLE_OPERATION_TIMEDOUT
            return CatalogError(
                .timeout,
                "\(host) did not answer within \(formatSeconds(timeout)) seconds; try again or raise --timeout.")
        case 18, 56, 52, 55:  // PARTIAL_FILE, RECV_ERROR, GOT_NOTHING, SEND_ERROR
            return CatalogError(
                .transfer, "The connection to \(host) broke off before the response was complete\(said); try again.")
        case 23, 63:  // WRITE_ERROR (our size limit), FILESIZE_EXCEEDED
            return CatalogError(.tooLarge, "The response from \(host) is larger than expected; check the base URL.")
        case 47:  // TOO_MANY_REDIRECTS
            return CatalogError(.transfer, "\(host) redirected too many times; check the base URL.")
        case 35, 51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91:  // TLS and certificate failures
            return CatalogError(
                .tls, "A secure connection to \(host) failed\(said); check the system clock and CA certificates.")
        case 1, 3:  // UNSUPPORTED_PROTOCOL, URL_MALFORMAT
            return CatalogError(.connect, "'\(url)' is not a usable http(s) URL; check the base URL.")
        case 42:  // ABORTED_BY_CALLBACK: our progress callback saw the task cancelled
            return CatalogError(.cancelled, "The request to \(host) was cancelled.")
        case 61:  // BAD_CONTENT_ENCODING
            return CatalogError(.badResponse, "\(host) sent a body that could not be decompressed; try again.")
        default:
            return CatalogError(.other, "The request to \(host) failed (curl error \(code)\(said)); try again.")
        }
    }

    /// `host[:port]` of an absolute URL, for messages.
    public static func hostPort(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        let authority = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        let hostPart = authority.split(separator: "@").last ?? authority
        return hostPart.isEmpty ? url : String(hostPart)
    }

    static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// How long to wait out 403/429 rate limiting before giving up. Pure.
public struct RetryPolicy: Sendable, Equatable {
    /// Retries after the first attempt.
    public var maximumRetries: Int
    /// The longest single wait we sit out; a longer Retry-After fails at once with that figure.
    public var maximumWait: Double
    /// The first back-off when the server gives no Retry-After; doubled each time.
    public var baseDelay: Double

    public init(maximumRetries: Int = 2, maximumWait: Double = 10, baseDelay: Double = 1) {
        self.maximumRetries = maximumRetries
        self.maximumWait = maximumWait
        self.baseDelay = baseDelay
    }

    public static let none = RetryPolicy(maximumRetries: 0)

    public enum Decision: Equatable, Sendable {
        case retry(after: Double)
        case giveUp
    }

    /// What to do after a rate-limited answer on attempt `attempt` (0 for the first).
    public func decision(retryAfter: Double?, attempt: Int) -> Decision {
        guard attempt < maximumRetries else { return .giveUp }
        let wait = retryAfter.map { max(0, $0) } ?? baseDelay * Double(1 << min(attempt, 16))
        return wait <= maximumWait ? .retry(after: wait) : .giveUp
    }

    /// Seconds to wait from a `Retry-After` value: delta-seconds or an HTTP-date (`now` in Unix seconds).
    public static func retryAfterSeconds(_ header: String, now: Double) -> Double? {
        let value = header.trimmingWhitespace()
        if let seconds = Int(value) { return Double(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return max(0, Double(date) - now)
    }
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the date form HTTP uses. Pure.
public enum HTTPDate {
    /// Unix seconds for an IMF-fixdate, nil for anything else.
    public static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]) else {
            return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let monthIndex = months.firstIndex(of: String(parts[2])) else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (1...31).contains(day), (0...23).contains(time[0]), (0...59).contains(time[1]),
            (0...60).contains(time[2])
        else { return nil }
        return daysFromCivil(year: year, month: monthIndex + 1, day: day) * 86_400 + time[0] * 3600 + time[1] * 60
            + time[2]
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
