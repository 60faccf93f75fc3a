import CCurl
import CCurlShim
import Dispatch
import PartyRadioCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One GET request.
public struct HTTPRequest: Sendable {
    public var url: String
    /// Extra headers, in order (e.g. `Authorization`).
    public var headers: [(String, String)]
    /// Seconds for the whole transfer, redirects included.
    public var timeout: Double

    public init(url: String, headers: [(String, String)] = [], timeout: Double = HTTPClient.defaultTimeout) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
    }
}

/// A complete response: any status, the final URL after redirects, headers with lowercased names.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]
    public var effectiveURL: String
    /// Seconds the transfer took, as libcurl measured it.
    public var totalTime: Double
    /// New connections this transfer opened: 0 when it reused a kept-alive one.
    public var connectionsOpened: Int

    public var contentType: String? { headers["content-type"] }
}

/// An HTTP client on libcurl's easy interface: timeouts, redirects, gzip/deflate/br, a
/// User-Agent, and connection reuse by keeping finished easy handles (and so their
/// connections) in a pool.
///
/// Transfers run on a Dispatch worker so `curl_easy_perform` never blocks Swift's cooperative
/// pool. Transport failures come back as ``CatalogError`` values; HTTP statuses are returned for
/// the caller to judge.
public final class HTTPClient: Sendable {
    public static let userAgent = "partyradio/0.1"
    public static let defaultTimeout: Double = 15
    public static let defaultConnectTimeout: Double = 5
    /// Apple's largest answers (200 results) are about 300 KB; 16 MB means something is wrong.
    public static let defaultMaximumBodyBytes = 16 << 20

    private let idleHandles = Mutex<[CurlHandle]>([])
    private let connectTimeout: Double
    private let maximumBodyBytes: Int
    private static let maximumIdleHandles = 4
    private static let globalInit: CURLcode = prcurl_global_init()
    /// The user's `no_proxy` plus loopback: a fixture server on 127.0.0.1 is never reached
    /// through a proxy (setting CURLOPT_NOPROXY replaces the variable, so it is kept here).
    private static let noProxy: String = {
        let user = [getenv("no_proxy"), getenv("NO_PROXY")].compactMap { $0.map { String(cString: $0) } }
            .first(where: { !$0.isEmpty })
        return ([user].compactMap { $0 } + ["localhost", "127.0.0.1", "::1"]).joined(separator: ",")
    }()

    public init(connectTimeout: Double = defaultConnectTimeout, maximumBodyBytes: Int = defaultMaximumBodyBytes) {
        self.connectTimeout = connectTimeout
        self.maximumBodyBytes = maximumBodyBytes
    }

    deinit {
        idleHandles.withLock { handles in
            for handle in handles { prcurl_easy_cleanup(handle.raw) }
            handles.removeAll()
        }
    }

    /// Performs `request`; throws only transport failures (DNS, connect, timeout, truncation)
    /// and `.cancelled` when the calling task is cancelled (noticed within about a second).
    public func get(_ request: HTTPRequest) async throws(CatalogError) -> HTTPResponse {
        let cancellation = CancellationFlag()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPResponse, CatalogError>, Never>) in
                DispatchQueue.global().async {
                    continuation.resume(returning: self.perform(request, cancellation: cancellation))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// The blocking transfer; runs on a Dispatch worker.
    func perform(_ request: HTTPRequest, cancellation: CancellationFlag) -> Result<HTTPResponse, CatalogError> {
        guard !cancellation.isCancelled else {
            return .failure(CatalogError(.cancelled, "The request was cancelled before it started."))
        }
        guard Self.globalInit == CURLE_OK else {
            return .failure(CatalogError(.other, String(cString: prcurl_load_error())))
        }
        guard let handle = checkOut() else {
            return .failure(CatalogError(.other, "libcurl could not create a transfer handle (out of memory?)."))
        }
        var reusable = true
        defer { checkIn(handle, reusable: reusable) }
        let easy = handle.raw
        prcurl_easy_reset(easy)  // forgets options, keeps the connection cache

        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in [("Accept", "application/json")] + request.headers {
            headerList = prcurl_slist_append(headerList, "\(name): \(value)")
        }
        defer { prcurl_slist_free_all(headerList) }

        let transfer = Transfer(limit: maximumBodyBytes, cancellation: cancellation)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var errorBuffer = [CChar](repeating: 0, count: prcurl_error_buffer_size())
        let code: CURLcode = withExtendedLifetime(transfer) {
            errorBuffer.withUnsafeMutableBufferPointer { buffer in
                var setup = CURLE_OK
                func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
                set(prcurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, buffer.baseAddress))
                set(
                    prcurl_setup_transfer(
                        easy, request.url, Self.userAgent, headerList, curlWriteBody, curlWriteHeader,
                        curlCheckCancellation, context))
                set(prcurl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))  // every encoding curl can decode
                set(prcurl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
                set(prcurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout)))
                set(prcurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)))
                set(prcurl_setopt_string(easy, CURLOPT_NOPROXY, Self.noProxy))
                guard setup == CURLE_OK else { return setup }
                let result = prcurl_easy_perform(easy)
                _ = prcurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
                return result
            }
        }
        guard code == CURLE_OK else {
            reusable = false  // a broken transfer may leave the connection in an odd state
            let detail = String(
                decoding: errorBuffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let codeValue = transfer.exceededLimit ? 23 : Int(code.rawValue)
            return .failure(
                TransferFailure.error(curlCode: codeValue, url: request.url, detail: detail, timeout: request.timeout))
        }
        var status = 0
        _ = prcurl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var effective: UnsafePointer<CChar>?
        _ = prcurl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
        var seconds = 0.0
        _ = prcurl_getinfo_double(easy, CURLINFO_TOTAL_TIME, &seconds)
        var connects = 0
        _ = prcurl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        return .success(
            HTTPResponse(
                status: status, headers: transfer.headers, body: transfer.body,
                effectiveURL: effective.map { String(cString: $0) } ?? request.url, totalTime: seconds,
                connectionsOpened: connects))
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        Int(max(0.05, min(seconds, 86_400)) * 1000)
    }

    private func checkOut() -> CurlHandle? {
        if let handle = idleHandles.withLock({ $0.popLast() }) { return handle }
        return prcurl_easy_init().map(CurlHandle.init)
    }

    private func checkIn(_ handle: CurlHandle, reusable: Bool) {
        let keep =
            reusable
            && idleHandles.withLock { handles in
                guard handles.count < Self.maximumIdleHandles else { return false }
                handles.append(handle)
                return true
            }
        if !keep { prcurl_easy_cleanup(handle.raw) }
    }
}

/// A libcurl easy handle. `@unchecked Sendable`: a handle is used by one transfer at a time,
/// handed between threads only through the client's mutex-guarded pool.
struct CurlHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}

/// Set from the task's cancellation handler, read by the progress callback on curl's thread.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
    func cancel() { flag.store(true, ordering: .releasing) }
}

/// What the C callbacks fill during one transfer. Only the transferring thread touches it.
final class Transfer {
    let limit: Int
    let cancellation: CancellationFlag
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var exceededLimit = false

    init(limit: Int, cancellation: CancellationFlag) {
        self.limit = limit
        self.cancellation = cancellation
    }
}

/// CURLOPT_XFERINFOFUNCTION: called about once a second and on progress; non-zero aborts the
/// transfer with CURLE_ABORTED_BY_CALLBACK.
private func curlCheckCancellation(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().cancellation.isCancelled ? 1 : 0
}

/// CURLOPT_WRITEFUNCTION: appends body bytes; returning less than given aborts an oversized body.
private func curlWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard transfer.body.count + length <= transfer.limit else {
        transfer.exceededLimit = true
        return 0
    }
    transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

/// CURLOPT_HEADERFUNCTION: one header line per call; a status line starts a new response
/// (after a redirect), so earlier headers are dropped.
private func curlWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    switch HTTPHeaderLine(data: data, size: size, count: count) {
    case .status: transfer.headers.removeAll()  // a redirect's or 100 Continue's fields are not the answer's
    case .field(let name, let value): transfer.headers[name] = value
    case .other: break
    }
    return size * count
}
