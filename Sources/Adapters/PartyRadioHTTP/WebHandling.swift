import CMicroHTTPDShim
import Glibc

/// What the DJ's web page is served by: every request the media server gets for a path outside
/// `/media/` goes to the handler set with ``MediaServer/setWebHandler(_:)`` (docs/WEB.md).
///
/// Each connection has its own thread (libmicrohttpd's thread-per-connection mode), so a handler
/// may block: waiting for the DJ's answer to a vote, or for the next server-sent event.
public protocol WebHandler: Sendable {
    func respond(to request: WebRequest) -> WebResponse
}

/// One HTTP request, as read off the connection.
public struct WebRequest: Sendable {
    public var method: String
    /// The path without the query (`/api/vote`).
    public var path: String
    /// The client's IP address (IPv4-mapped addresses as plain IPv4).
    public var clientAddress: String
    /// The body (POST only), at most ``MediaServer/maxBodyBytes``.
    public var body: [UInt8]
    /// Request headers by lower-cased name (the first of a repeated header).
    public var headers: [String: String]
    /// Query arguments, decoded by libmicrohttpd.
    public var query: [String: String]
    /// Cookies by name.
    public var cookies: [String: String]

    public init(
        method: String, path: String, clientAddress: String, body: [UInt8] = [], headers: [String: String] = [:],
        query: [String: String] = [:], cookies: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.clientAddress = clientAddress
        self.body = body
        self.headers = headers
        self.query = query
        self.cookies = cookies
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A stream of bytes sent as they come (server-sent events).
public protocol WebStream: AnyObject, Sendable {
    /// The next bytes to send, waiting for them as long as it takes (the stream sends its own
    /// keep-alives); nil ends the response. While it waits it should ask `clientGone` now and then
    /// (a few times a second): a client that hung up must not hold its connection slot until the
    /// next write fails.
    func next(clientGone: () -> Bool) -> [UInt8]?
}

/// The answer to a ``WebRequest``.
public struct WebResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        case stream(any WebStream)
    }

    public var status: UInt32
    public var headers: [(String, String)]
    public var body: Body

    public init(status: UInt32, headers: [(String, String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension MediaServer {
    /// The largest request body taken (a form with a chat line fits many times over); larger
    /// bodies are answered 413.
    public static let maxBodyBytes = 4096
}

/// A POST's body while it arrives (one per request, freed when the request completes).
final class PendingBody {
    var bytes: [UInt8] = []
    var tooLarge = false
}

/// A request is over (answered, or the client went away): the connection waits for the next
/// request's headers; frees its pending body, if any.
func webRequestCompleted(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_RequestTerminationCode
) {
    if let context, let connection {
        Unmanaged<MediaServer.Registry>.fromOpaque(context).takeUnretainedValue().connections.requestEnded(connection)
    }
    guard let connectionContext, let pending = connectionContext.pointee else { return }
    Unmanaged<PendingBody>.fromOpaque(pending).release()
    connectionContext.pointee = nil
}

/// Handles a request for a path outside `/media/`: collects a POST's body over the calls
/// libmicrohttpd makes, then asks the web handler and queues its response.
func webAccess(
    handler: any WebHandler, connections: ConnectionGuard, connection: OpaquePointer, path: String, method: String,
    uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
    connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let connectionContext else { return .NO }
    // Two Content-Length headers (even equal ones) make the body's end a matter of which one a
    // reader believes, the start of request smuggling: refused before anything is read.
    if connectionContext.pointee == nil, headerCount(connection, "content-length") > 1 {
        return queue(connection, WebResponse(status: 400))
    }
    var body: [UInt8] = []
    if method == "POST" {
        guard let stored = connectionContext.pointee else {
            // The first call: headers only. A body announced too large is refused before it comes.
            if let length = lookup(connection, .HEADER_KIND, "Content-Length").flatMap({ Int($0) }),
                length > MediaServer.maxBodyBytes
            {
                return queue(connection, tooLarge())
            }
            connectionContext.pointee = Unmanaged.passRetained(PendingBody()).toOpaque()
            return .YES
        }
        let pending = Unmanaged<PendingBody>.fromOpaque(stored).takeUnretainedValue()
        if let uploadDataSize, uploadDataSize.pointee > 0 {
            let count = uploadDataSize.pointee
            if !pending.tooLarge, let uploadData {
                if pending.bytes.count + count > MediaServer.maxBodyBytes {
                    pending.tooLarge = true
                    pending.bytes = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                        pending.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
                    }
                }
            }
            uploadDataSize.pointee = 0  // consumed (or thrown away)
            return .YES
        }
        if pending.tooLarge { return queue(connection, tooLarge()) }
        body = pending.bytes
    } else if let uploadDataSize, uploadDataSize.pointee > 0 {
        return queue(connection, WebResponse(status: 400))  // a body on a GET is not ours to read
    }
    var address = [CChar](repeating: 0, count: 64)
    let client =
        prmhd_client_address(connection, &address, address.count) == 0
        ? String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let request = WebRequest(
        method: method, path: path, clientAddress: client, body: body,
        headers: values(connection, .HEADER_KIND, lowercased: true), query: values(connection, .GET_ARGUMENT_KIND),
        cookies: values(connection, .COOKIE_KIND))
    let response = handler.respond(to: request)
    // Event streams hold their connection for as long as the page is open: they have a share of
    // their own (ConnectionTable); over it, the machine holding the most streams is refused.
    if case .stream = response.body, !connections.streamStarting(connection) {
        return queue(connection, busy())
    }
    return queue(connection, response)
}

private func busy() -> WebResponse {
    WebResponse(
        status: 503, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "10")],
        body: .bytes(Array("This machine holds too many live connections to the station; close some pages.\n".utf8)))
}

private func tooLarge() -> WebResponse {
    WebResponse(
        status: 413, headers: [("Content-Type", "text/plain; charset=utf-8")],
        body: .bytes(Array("The request body is over \(MediaServer.maxBodyBytes) bytes.\n".utf8)))
}

private func lookup(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ key: String) -> String? {
    mhd.MHD_lookup_connection_value!(connection, kind, key).map { String(cString: $0) }
}

/// How many headers are called `name` (lower-case), in any case.
private func headerCount(_ connection: OpaquePointer, _ name: String) -> Int {
    final class Counter {
        var name = ""
        var count = 0
    }
    let counter = Counter()
    counter.name = name
    _ = mhd.MHD_get_connection_values!(
        connection, .HEADER_KIND,
        { context, _, key, _ in
            guard let context, let key else { return .YES }
            let counter = Unmanaged<Counter>.fromOpaque(context).takeUnretainedValue()
            if String(cString: key).lowercased() == counter.name { counter.count += 1 }
            return .YES
        }, Unmanaged.passUnretained(counter).toOpaque())
    return counter.count
}

/// Every value of one kind (headers, query arguments, cookies); the first of repeated keys wins.
private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool = false) -> [String: String] {
    final class Collector {
        var values: [String: String] = [:]
        var lowercased = false
    }
    let collector = Collector()
    collector.lowercased = lowercased
    let context = Unmanaged.passUnretained(collector).toOpaque()
    _ = mhd.MHD_get_connection_values!(
        connection, kind,
        { context, _, key, value in
            guard let context, let key else { return .YES }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            guard collector.values.count < 64 else { return .NO }  // enough: the rest is ignored
            var name = String(cString: key)
            if collector.lowercased { name = name.lowercased() }
            if collector.values[name] == nil { collector.values[name] = value.map { String(cString: $0) } ?? "" }
            return .YES
        }, context)
    return collector.values
}

/// Queues `response` on the connection.
private func queue(_ connection: OpaquePointer, _ response: WebResponse) -> MHD_Result {
    let made: OpaquePointer?
    switch response.body {
    case .bytes(let bytes):
        made = bytes.withUnsafeBytes {
            mhd.MHD_create_response_from_buffer!(
                bytes.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
        }
    case .stream(let stream):
        let box = Unmanaged.passRetained(StreamBox(stream, socket: prmhd_connection_fd(connection))).toOpaque()
        made = mhd.MHD_create_response_from_callback!(UInt64.max, 4096, streamRead, box, streamFree)
        if made == nil { Unmanaged<StreamBox>.fromOpaque(box).release() }
    }
    guard let made else { return .NO }
    for (name, value) in response.headers { _ = mhd.MHD_add_response_header!(made, name, value) }
    let result = mhd.MHD_queue_response!(connection, response.status, made)
    mhd.MHD_destroy_response!(made)
    return result
}

/// A stream and the bytes it gave that did not fit the last buffer. Touched only by its
/// connection's thread.
private final class StreamBox {
    let stream: any WebStream
    let socket: Int32
    var pending: [UInt8] = []
    init(_ stream: any WebStream, socket: Int32) {
        self.stream = stream
        self.socket = socket
    }

    /// Whether the client closed its end (or the socket failed): a poll that returns at once.
    func clientGone() -> Bool {
        guard socket >= 0 else { return false }
        let peerClosed: Int16 = 0x2000  // POLLRDHUP (Linux; Glibc's module leaves it out without _GNU_SOURCE)
        var entry = pollfd(fd: socket, events: peerClosed, revents: 0)
        guard poll(&entry, 1, 0) >= 0 else { return true }
        return entry.revents & (peerClosed | Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)) != 0
    }
}

private func streamRead(
    context: UnsafeMutableRawPointer?, position: UInt64, buffer: UnsafeMutablePointer<CChar>?, max: Int
)
    -> Int
{
    guard let context, let buffer, max > 0 else { return -1 }
    let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
    if box.pending.isEmpty {
        guard let next = box.stream.next(clientGone: box.clientGone) else { return -1 }  // end of stream
        box.pending = next
    }
    let count = min(max, box.pending.count)
    box.pending.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress!, byteCount: count)
    }
    box.pending.removeFirst(count)
    return count
}

private func streamFree(context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<StreamBox>.fromOpaque(context).release()
}
