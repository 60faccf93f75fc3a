import CCurl
import CCurlShim
import PartyRadioCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One GET as libcurl runs it: what every transfer of ours shares (http and https only, at most 5
/// redirects, no signals, never a proxy to loopback) plus the few settings that differ.
public struct CurlRequest: Sendable {
    public var url: String
    /// Extra headers, in order (`Range`, `Authorization`, a private station's proof).
    public var headers: [(String, String)]
    /// Seconds for the whole transfer, redirects included.
    public var timeout: Double
    /// Seconds to make a connection.
    public var connectTimeout: Double
    /// The transfer is dropped when slower than `bytesPerSecond` for `seconds` (a connection stuck
    /// in retransmission back-off); nil: only ``timeout`` ends a slow one.
    public var lowSpeed: (bytesPerSecond: Int, seconds: Int)?
    /// Asks for every encoding libcurl can undo (gzip, deflate, br) and hands the body over undone.
    public var acceptsCompression: Bool
    /// TCP keep-alive probes on the connection (one kept for the next request).
    public var keepAlive: Bool
    /// A body makes the request a POST of it (the DJ's own commands to its page's API); nil: a GET.
    public var body: [UInt8]?

    public static let userAgent = "partyradio/0.1"

    public init(
        url: String, headers: [(String, String)] = [], timeout: Double, connectTimeout: Double,
        lowSpeed: (bytesPerSecond: Int, seconds: Int)? = nil, acceptsCompression: Bool = false,
        keepAlive: Bool = false, body: [UInt8]? = nil
    ) {
        self.body = body
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.lowSpeed = lowSpeed
        self.acceptsCompression = acceptsCompression
        self.keepAlive = keepAlive
    }
}

/// What a finished transfer left: libcurl's failure, if any, and its account of the answer.
public struct CurlOutcome: Sendable {
    /// Nil when the transfer completed, whatever the status; an HTTP status is no failure here.
    public var failure: CurlFailure?
    /// The last response's status (0 when none came).
    public var status: Int
    /// The URL after redirects.
    public var effectiveURL: String
    /// Seconds the transfer took, as libcurl measured it.
    public var totalTime: Double
    /// New connections this transfer opened: 0 when it reused a kept-alive one.
    public var connectionsOpened: Int
}

/// What one transfer's callbacks tell, on the thread that runs ``CurlHandle/perform(_:into:)``,
/// one call at a time.
public protocol CurlReceiver: AnyObject {
    /// A response begins with this status (a redirect's or a `100 Continue`'s come before the answer's).
    func received(status: Int)
    /// One header field of the current response; the name in lower case, the value trimmed.
    func received(field name: String, value: String)
    /// Body bytes, as they arrive (decompressed); false stops the transfer (`CURLE_WRITE_ERROR`, 23).
    func received(body: UnsafeRawBufferPointer) -> Bool
    /// Asked about once a second and as bytes move; false aborts the transfer
    /// (`CURLE_ABORTED_BY_CALLBACK`, 42): how a transfer is cancelled from another thread.
    func shouldContinue() -> Bool
}

/// A libcurl easy handle, the one way partyradio fetches over HTTP (the catalog's client and the
/// listener's media cache). A handle keeps its connection from one transfer to the next; it runs
/// one transfer at a time, blocking the calling thread.
///
/// libcurl is loaded with `dlopen` and initialised once per process, by the first ``load()`` or
/// handle (CCurlShim); commands that fetch nothing never map it.
///
/// `@unchecked Sendable`: a C handle, used by one transfer at a time; its owners hand it between
/// threads only under a lock (the catalog's pool) or keep it on one thread (a cache worker).
public final class CurlHandle: @unchecked Sendable {
    private let easy: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER: libcurl's sentence about a failure, written during a transfer.
    private let errorBuffer: UnsafeMutableBufferPointer<CChar>

    /// Loads libcurl and runs `curl_global_init`, once per process (thread-safe: later calls only
    /// read the first one's answer). Nil when libcurl is usable; otherwise why not, with the fix.
    @discardableResult
    public static func load() -> CurlFailure? { loaded }

    private static let loaded: CurlFailure? = {
        let code = prcurl_global_init()
        return code == CURLE_OK
            ? nil : CurlFailure(code: Int(code.rawValue), detail: String(cString: prcurl_load_error()))
    }()

    /// A new handle: fails when libcurl cannot be loaded (``load()``) or is out of memory.
    public init() throws(CurlFailure) {
        if let failure = Self.load() { throw failure }
        guard let easy = prcurl_easy_init() else {
            throw CurlFailure(
                code: Int(CURLE_OUT_OF_MEMORY.rawValue),
                detail: "libcurl could not create a transfer handle (out of memory?).")
        }
        self.easy = easy
        errorBuffer = .allocate(capacity: prcurl_error_buffer_size())
        errorBuffer.initialize(repeating: 0)
    }

    deinit {
        prcurl_easy_cleanup(easy)
        errorBuffer.deallocate()
    }

    /// Runs `request`, handing what arrives to `receiver`; returns when the transfer is over.
    /// The handle's earlier options are forgotten, its connection kept.
    public func perform(_ request: CurlRequest, into receiver: some CurlReceiver) -> CurlOutcome {
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headerList = prcurl_slist_append(headerList, "\(name): \(value)") }
        defer { prcurl_slist_free_all(headerList) }
        prcurl_easy_reset(easy)
        errorBuffer[0] = 0
        let context = CurlContext(receiver)
        let code: CURLcode = withExtendedLifetime(context) {
            var setup = CURLE_OK
            func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
            set(prcurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress))
            set(
                prcurl_setup_transfer(
                    easy, request.url, CurlRequest.userAgent, headerList, curlBody, curlHeader, curlProgress,
                    Unmanaged.passUnretained(context).toOpaque()))
            set(prcurl_setopt_string(easy, CURLOPT_NOPROXY, Self.noProxy))
            set(prcurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)))
            set(prcurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)))
            if let lowSpeed = request.lowSpeed {
                set(prcurl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond))
                set(prcurl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, lowSpeed.seconds))
            }
            if request.acceptsCompression { set(prcurl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")) }
            if request.keepAlive { set(prcurl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)) }
            if let body = request.body {
                // The size first: COPYPOSTFIELDS copies that many bytes (a body may hold NULs).
                set(prcurl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, body.count))
                // (A NUL after it: an empty body still has an address.)
                set(
                    (body + [0]).withUnsafeBytes {
                        prcurl_setopt_pointer(
                            easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                    })
            }
            guard setup == CURLE_OK else { return setup }
            return prcurl_easy_perform(easy)
        }
        _ = prcurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
        var status = 0
        _ = prcurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var effective: UnsafePointer<CChar>?
        _ = prcurl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
        var seconds = 0.0
        _ = prcurl_getinfo_double(easy, CURLINFO_TOTAL_TIME, &seconds)
        var connects = 0
        _ = prcurl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        let failure =
            code == CURLE_OK
            ? nil
            : CurlFailure(
                code: Int(code.rawValue),
                detail: String(cString: errorBuffer.baseAddress!))  // invalid UTF-8 repaired
        return CurlOutcome(
            failure: failure, status: status, effectiveURL: effective.map { String(cString: $0) } ?? request.url,
            totalTime: seconds, connectionsOpened: connects)
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        Int(max(0.05, min(seconds, 86_400)) * 1000)
    }

    /// The user's `no_proxy` plus loopback: a server on 127.0.0.1 (a test's fixture, a DJ on this
    /// machine) is never reached through a proxy (setting CURLOPT_NOPROXY replaces the variable, so
    /// it is kept here).
    private static let noProxy: String = {
        let user = [getenv("no_proxy"), getenv("NO_PROXY")].compactMap { $0.map { String(cString: $0) } }
            .first(where: { !$0.isEmpty })
        return ([user].compactMap { $0 } + ["localhost", "127.0.0.1", "::1"]).joined(separator: ",")
    }()
}

/// The receiver of one transfer, behind the opaque pointer the C callbacks get.
private final class CurlContext {
    let receiver: any CurlReceiver
    init(_ receiver: any CurlReceiver) { self.receiver = receiver }

    static func from(_ opaque: UnsafeMutableRawPointer) -> any CurlReceiver {
        Unmanaged<CurlContext>.fromOpaque(opaque).takeUnretainedValue().receiver
    }
}

/// CURLOPT_WRITEFUNCTION: hands body bytes on; returning less than given stops the transfer.
private func curlBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let length = size * count
    return CurlContext.from(context).received(body: UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_HEADERFUNCTION: one line of a response head per call.
private func curlHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let receiver = CurlContext.from(context)
    switch HTTPHeaderLine(data: data, size: size, count: count) {
    case .status(let code): receiver.received(status: code)
    case .field(let name, let value): receiver.received(field: name, value: value)
    case .other: break
    }
    return size * count
}

/// CURLOPT_XFERINFOFUNCTION: called about once a second and on progress; non-zero aborts the
/// transfer with CURLE_ABORTED_BY_CALLBACK.
private func curlProgress(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    return CurlContext.from(context).shouldContinue() ? 0 : 1
}
