/// A catalog failure a user can act on: the message says what happened and what to do.
///
/// A public struct around an open set of codes (as Hummingbird does) so cases can grow
/// without breaking callers. Switch on ``code``; ``underlying`` keeps the lower-level error
/// (``SQLiteError``, ``JSONParseError``, ``CurlFailure``, ``OpenSSLFailure``) when there was one.
public struct CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; compare against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The host name did not resolve.
        public static let dns = Code("dns")
        /// No connection could be made (refused, unreachable, no network).
        public static let connect = Code("connect")
        /// The server did not answer in time.
        public static let timeout = Code("timeout")
        /// The transfer broke off or the body was cut short.
        public static let transfer = Code("transfer")
        /// TLS failed (certificate, handshake).
        public static let tls = Code("tls")
        /// The server answered with an error status other than a rate limit.
        public static let httpStatus = Code("http-status")
        /// 403/429 rate limiting that back-off could not wait out.
        public static let rateLimited = Code("rate-limited")
        /// The Apple Music API refused the developer or user token (401/403).
        public static let unauthorized = Code("unauthorized")
        /// The body was not the JSON shape expected (HTML page, malformed JSON, truncated).
        public static let badResponse = Code("bad-response")
        /// The response exceeded the size limit.
        public static let tooLarge = Code("too-large")
        /// The `.p8` key could not be read or is not an ES256 (P-256) key.
        public static let key = Code("key")
        /// The on-disk cache could not be used.
        public static let cache = Code("cache")
        /// The caller's task was cancelled mid-request.
        public static let cancelled = Code("cancelled")
        /// Anything else curl reports.
        public static let other = Code("other")
    }

    public var code: Code
    /// One sentence saying what went wrong and what to do.
    public var message: String
    /// The HTTP status, when there was one.
    public var status: Int?
    /// Seconds the server asked us to wait (Retry-After), when it said.
    public var retryAfter: Double?
    /// The error this one explains, when it came from a library call.
    public var underlying: (any Error)?

    public init(
        _ code: Code, _ message: String, status: Int? = nil, retryAfter: Double? = nil, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
        self.underlying = underlying
    }

    public var description: String { message }

    /// Equal when they say the same thing; the underlying error, which need not be equatable,
    /// is not compared.
    public static func == (lhs: CatalogError, rhs: CatalogError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.status == rhs.status
            && lhs.retryAfter == rhs.retryAfter
    }
}
