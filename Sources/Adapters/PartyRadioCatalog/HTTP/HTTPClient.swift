import Dispatch
import PartyRadioCurl
import Synchronization

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

/// The catalog's HTTP client, on the libcurl adapter (``CurlHandle``): timeouts, redirects,
/// gzip/deflate/br, a User-Agent, and connection reuse by keeping finished handles (and so their
/// connections) in a pool.
///
/// Transfers run on a Dispatch worker so `curl_easy_perform` never blocks Swift's cooperative
/// pool. Transport failures come back as ``CatalogError`` values; HTTP statuses are returned for
/// the caller to judge.
public final class HTTPClient: Sendable {
    public static let userAgent = CurlRequest.userAgent
    public static let defaultTimeout: Double = 15
    public static let defaultConnectTimeout: Double = 5
    /// Apple's largest answers (200 results) are about 300 KB; 16 MB means something is wrong.
    public static let defaultMaximumBodyBytes = 16 << 20

    private let idleHandles = Mutex<[CurlHandle]>([])
    private let connectTimeout: Double
    private let maximumBodyBytes: Int
    private static let maximumIdleHandles = 4

    public init(connectTimeout: Double = defaultConnectTimeout, maximumBodyBytes: Int = defaultMaximumBodyBytes) {
        self.connectTimeout = connectTimeout
        self.maximumBodyBytes = maximumBodyBytes
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
        let handle: CurlHandle
        do throws(CurlFailure) {
            handle = try checkOut()
        } catch {
            var failure = CatalogError(.other, error.detail)
            failure.underlying = error
            return .failure(failure)
        }
        let transfer = Transfer(limit: maximumBodyBytes, cancellation: cancellation)
        let outcome = handle.perform(
            CurlRequest(
                url: request.url, headers: [("Accept", "application/json")] + request.headers,
                timeout: request.timeout, connectTimeout: connectTimeout, acceptsCompression: true, keepAlive: true),
            into: transfer)
        // A broken transfer may leave the connection in an odd state: its handle is not kept.
        checkIn(handle, reusable: outcome.failure == nil)
        if let failure = outcome.failure {
            let code = transfer.exceededLimit ? 23 : failure.code
            return .failure(
                TransferFailure.error(
                    curlCode: code, url: request.url, detail: failure.detail, timeout: request.timeout))
        }
        return .success(
            HTTPResponse(
                status: outcome.status, headers: transfer.headers, body: transfer.body,
                effectiveURL: outcome.effectiveURL, totalTime: outcome.totalTime,
                connectionsOpened: outcome.connectionsOpened))
    }

    private func checkOut() throws(CurlFailure) -> CurlHandle {
        if let handle = idleHandles.withLock({ $0.popLast() }) { return handle }
        return try CurlHandle()
    }

    private func checkIn(_ handle: CurlHandle, reusable: Bool) {
        guard reusable else { return }
        idleHandles.withLock { handles in
            if handles.count < Self.maximumIdleHandles { handles.append(handle) }
        }
    }
}

/// Set from the task's cancellation handler, read by the progress callback on curl's thread.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
    func cancel() { flag.store(true, ordering: .releasing) }
}

/// What one transfer's callbacks fill. Only the transferring thread touches it.
final class Transfer: CurlReceiver {
    let limit: Int
    let cancellation: CancellationFlag
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var exceededLimit = false

    init(limit: Int, cancellation: CancellationFlag) {
        self.limit = limit
        self.cancellation = cancellation
    }

    /// A redirect's or 100 Continue's fields are not the answer's.
    func received(status: Int) { headers.removeAll() }

    func received(field name: String, value: String) { headers[name] = value }

    /// Appends body bytes; an oversized body stops the transfer.
    func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= limit else {
            exceededLimit = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    func shouldContinue() -> Bool { !cancellation.isCancelled }
}
