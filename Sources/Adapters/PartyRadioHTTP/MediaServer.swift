import CMicroHTTPDShim
import Glibc
import PartyRadioCore
import Synchronization

/// Why the media server could not start or register a file.
public struct MediaServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Serves the DJ's registered files to listeners over HTTP (libmicrohttpd), with Range requests so
/// a listener can start mid-track. Nothing but registered files is reachable: a request names an
/// opaque token (`/media/<token>`), never a path, so there is nothing to traverse. GET and HEAD only.
public final class MediaServer: Sendable {
    /// The address the server is bound to, as given.
    public let address: String
    /// The port it listens on (the kernel's pick when 0 was asked for).
    public let port: UInt16
    /// URL path prefix of every served file.
    public static let pathPrefix = "/media/"

    private let registry: Registry
    private let daemon: Mutex<DaemonHandle?>

    /// What one client, and all of them, may hold: a guest who opens connections and sends
    /// nothing (or a byte now and then), from one address or from many aliases of one machine,
    /// must not starve the listeners' fetches nor keep guests off the page (``ConnectionTable``).
    public typealias Limits = ConnectionTable.Limits

    public let limits: Limits

    /// Starts serving on `address` (an IPv4 or IPv6 literal) and `port` (0 = any free port).
    /// - Parameter machineOf: the machine a client address belongs to (its link-layer address from
    ///   the neighbour table), nil when unknown: aliases of one machine then share its fair share.
    public init(
        address: String = "127.0.0.1", port: UInt16 = 0, limits: Limits = Limits(),
        machineOf: @escaping @Sendable (String) -> String? = { _ in nil }
    ) throws(MediaServerError) {
        // libmicrohttpd is loaded here, by the DJ's server only (CMicroHTTPDShim); every call below
        // and in WebHandling goes through `mhd`.
        guard prmhd_load() == 0 else { throw MediaServerError(String(cString: prmhd_load_error()) + ".") }
        self.address = address
        self.limits = limits
        Self.allowOpenFiles(Int(limits.daemonTotal) + 256)
        let registry = Registry(connections: ConnectionGuard(limits: limits, machineOf: machineOf))
        self.registry = registry
        if !mhd.MHD_is_feature_supported!(.FEATURE_AUTOSUPPRESS_SIGPIPE).isYes {
            signal(SIGPIPE, SIG_IGN)  // a listener hanging up mid-file must not kill the DJ
        }
        let context = Unmanaged.passRetained(registry).toOpaque()
        // A thread per connection: the web page's handlers may wait (for the DJ's answer, for the
        // next event) without holding up anybody's media.
        var flags =
            UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue) | UInt32(MHD_USE_POLL.rawValue)
            | UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue)
        let started: OpaquePointer?
        if address.contains(":") {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            // A link-local address carries its zone (`fe80::1%eth0`): the interface to listen on.
            let parts = address.split(separator: "%", maxSplits: 1)
            if parts.count == 2 { socketAddress.sin6_scope_id = if_nametoindex(String(parts[1])) }
            guard inet_pton(AF_INET6, String(parts.first ?? ""), &socketAddress.sin6_addr) == 1,
                parts.count == 1 || socketAddress.sin6_scope_id != 0
            else {
                Unmanaged<Registry>.fromOpaque(context).release()
                throw MediaServerError("'\(address)' is not an IP address; give the media server a numeric address.")
            }
            flags |= UInt32(MHD_USE_IPv6.rawValue)
            started = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    prmhd_start_daemon(
                        flags, $0, mediaServerAcceptPolicy, mediaServerConnectionNotice, context, mediaServerAccess,
                        context, webRequestCompleted, limits.idleTimeoutSeconds, limits.daemonTotal)
                }
            }
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
                Unmanaged<Registry>.fromOpaque(context).release()
                throw MediaServerError("'\(address)' is not an IP address; give the media server a numeric address.")
            }
            started = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    prmhd_start_daemon(
                        flags, $0, mediaServerAcceptPolicy, mediaServerConnectionNotice, context, mediaServerAccess,
                        context, webRequestCompleted, limits.idleTimeoutSeconds, limits.daemonTotal)
                }
            }
        }
        guard let started else {
            Unmanaged<Registry>.fromOpaque(context).release()
            throw MediaServerError(
                "Could not listen on \(address) port \(port); pick another port or check the address is on this machine."
            )
        }
        self.port = prmhd_daemon_port(started)
        daemon = Mutex(DaemonHandle(daemon: started, context: context))
    }

    deinit { stop() }

    /// Raises this process's open-file limit (the soft one, up to the hard one) so that `count`
    /// connections fit; a limit that cannot be raised leaves the connection limits to do their work.
    static func allowOpenFiles(_ count: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(count) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(count))
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Stops the server; in-flight responses are cut. Safe to call twice.
    public func stop() {
        guard
            let handle = daemon.withLock({ state -> DaemonHandle? in
                defer { state = nil }
                return state
            })
        else { return }
        mhd.MHD_stop_daemon!(handle.daemon)  // joins the polling thread: no callback runs after this
        Unmanaged<Registry>.fromOpaque(handle.context).release()
    }

    /// Makes the file at `path` available and returns its token. The file must be a regular file;
    /// it is opened afresh for every request, so it may be replaced but not moved.
    /// - Parameter token: the token to use (letters, digits, `-` and `_`, at most 64), or nil for a
    ///   random one.
    @discardableResult
    public func register(path: String, token: String? = nil) throws(MediaServerError) -> String {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw MediaServerError("'\(path)' is not a readable regular file, so it cannot be served.")
        }
        let token = token ?? Self.randomToken()
        guard Self.isValidToken(token) else {
            throw MediaServerError("Media token '\(token)' must be 1–64 letters, digits, '-' or '_'.")
        }
        registry.entries.withLock {
            $0[token] = Registry.Entry(path: path, contentType: MediaKind.contentType(forFileName: path))
        }
        return token
    }

    /// Stops serving the file registered under `token`.
    public func unregister(token: String) {
        _ = registry.entries.withLock { $0.removeValue(forKey: token) }
    }

    /// Stops serving every file.
    public func unregisterAll() {
        registry.entries.withLock { $0.removeAll() }
    }

    /// Hands every request for a path outside `/media/` to `handler` (the DJ's web page); nil:
    /// they are answered 404.
    public func setWebHandler(_ handler: (any WebHandler)?) {
        registry.web.withLock { $0 = handler }
    }

    /// The header a private station's listeners send with every media request (mpv's
    /// `http-header-fields`): the proof of its join code.
    public static let proofHeader = "X-Partyradio-Proof"

    /// What a private station's media server asks of a request: the listener's player sends
    /// ``header`` (mpv's `http-header-fields`); a browser that gave the page the code sends the
    /// page's cookie, which also lets the page play the station.
    public struct Proof: Sendable, Equatable {
        public var header: String
        public var cookieName: String
        public var cookie: String

        public init(header: String, cookieName: String, cookie: String) {
            self.header = header
            self.cookieName = cookieName
            self.cookie = cookie
        }
    }

    /// Serves media only to requests that carry `proof` (a private station); the rest get 403.
    /// nil: anyone on the LAN may fetch (a public station).
    public func requireProof(_ proof: Proof?) {
        registry.proof.withLock { $0 = proof }
    }

    /// The URL path of a token: `/media/<token>`.
    public static func path(token: String) -> String { pathPrefix + token }

    /// The full URL listeners fetch, with `host` (default: the bound address) and the port.
    public func url(token: String, host: String? = nil) -> String {
        URLHost.httpOrigin(host ?? address, port: port) + Self.path(token: token)
    }

    static func isValidToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 64
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode(generator.next() as UInt64) + Hex.encode(generator.next() as UInt64)
    }

    /// What the access handler reads: token → file. Shared with the polling thread.
    final class Registry: Sendable {
        struct Entry: Sendable {
            var path: String
            var contentType: String
        }
        let entries = Mutex<[String: Entry]>([:])
        let web = Mutex<(any WebHandler)?>(nil)
        let proof = Mutex<Proof?>(nil)
        let connections: ConnectionGuard

        init(connections: ConnectionGuard) { self.connections = connections }

        /// Whether the request on `connection` shows the proof asked for (or none is asked for).
        func admits(_ connection: OpaquePointer) -> Bool {
            guard let wanted = proof.withLock({ $0 }) else { return true }
            let header = mhd.MHD_lookup_connection_value!(connection, .HEADER_KIND, MediaServer.proofHeader)
            let cookie = mhd.MHD_lookup_connection_value!(connection, .COOKIE_KIND, wanted.cookieName)
            return Self.same(header.map { String(cString: $0) }, wanted.header)
                || Self.same(cookie.map { String(cString: $0) }, wanted.cookie)
        }

        /// An empty secret never matches; the rest in constant time.
        static func same(_ shown: String?, _ wanted: String) -> Bool {
            !wanted.isEmpty && ConstantTime.equal(shown ?? "", wanted)
        }

        func lookup(urlPath: String) -> Entry? {
            guard urlPath.hasPrefix(MediaServer.pathPrefix) else { return nil }
            let token = String(urlPath.dropFirst(MediaServer.pathPrefix.count))
            guard MediaServer.isValidToken(token) else { return nil }
            return entries.withLock { $0[token] }
        }
    }

    struct DaemonHandle: @unchecked Sendable {  // the pointers are only used under the Mutex, then once in stop()
        let daemon: OpaquePointer
        let context: UnsafeMutableRawPointer
    }
}

extension MHD_Result {
    var isYes: Bool { self == .YES }
}

/// libmicrohttpd's access handler, called on its polling thread. Looks the token up, opens the
/// file and hands MHD an fd-backed response (sendfile); no other work.
private func mediaServerAccess(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let url, let method else { return .NO }
    let registry = Unmanaged<MediaServer.Registry>.fromOpaque(context).takeUnretainedValue()
    registry.connections.requestStarted(connection)
    let methodName = String(cString: method)
    let path = String(cString: url)
    if !path.hasPrefix(MediaServer.pathPrefix) {
        guard let handler = registry.web.withLock({ $0 }) else { return sendStatus(connection, 404) }
        return webAccess(
            handler: handler, connections: registry.connections, connection: connection, path: path, method: methodName,
            uploadData: uploadData,
            uploadDataSize: uploadDataSize, connectionContext: connectionContext)
    }
    guard methodName == "GET" || methodName == "HEAD" else {
        return sendStatus(connection, 405, extraHeaders: [("Allow", "GET, HEAD")])
    }
    // A body on a GET or HEAD is not ours to read: refuse rather than buffer it.
    if let uploadDataSize, uploadDataSize.pointee > 0 { return sendStatus(connection, 400) }
    guard registry.admits(connection) else { return sendStatus(connection, 403) }
    guard let entry = registry.lookup(urlPath: path) else { return sendStatus(connection, 404) }
    // libmicrohttpd closes the connection after a response queued in the first call (it cannot
    // know the request is complete yet): answer in the second, so the connection is kept alive and
    // a listener's next range (or the next track) does not pay for a new TCP handshake, which under
    // loss costs a second or more per lost SYN. The marker is released by `webRequestCompleted`.
    if let connectionContext, connectionContext.pointee == nil {
        connectionContext.pointee = Unmanaged.passRetained(PendingBody()).toOpaque()
        return .YES
    }

    let fd = open(entry.path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return sendStatus(connection, 404) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        close(fd)
        return sendStatus(connection, 404)
    }
    let size = Int64(info.st_size)
    let rangeHeader = mhd.MHD_lookup_connection_value!(connection, .HEADER_KIND, "Range").map { String(cString: $0) }
    let range = ByteRange.resolve(header: rangeHeader, size: size)

    let response: OpaquePointer?
    let status: UInt32
    switch range {
    case .full:
        response = mhd.MHD_create_response_from_fd64!(UInt64(size), fd)
        status = 200
    case .partial(let start, let end):
        response = mhd.MHD_create_response_from_fd_at_offset64!(UInt64(end - start + 1), fd, UInt64(start))
        status = 206
    case .unsatisfiable:
        close(fd)
        return sendStatus(connection, 416, extraHeaders: [("Content-Range", "bytes */\(size)")])
    }
    guard let response else {
        close(fd)
        return sendStatus(connection, 500)
    }
    _ = mhd.MHD_add_response_header!(response, "Content-Type", entry.contentType)
    _ = mhd.MHD_add_response_header!(response, "Accept-Ranges", "bytes")
    if let contentRange = range.contentRange(size: size) {
        _ = mhd.MHD_add_response_header!(response, "Content-Range", contentRange)
    }
    let result = mhd.MHD_queue_response!(connection, status, response)
    mhd.MHD_destroy_response!(response)  // MHD keeps its own reference until sent; it closes the fd
    return result
}

/// A short response with an empty body.
private func sendStatus(_ connection: OpaquePointer, _ status: UInt32, extraHeaders: [(String, String)] = [])
    -> MHD_Result
{
    guard let response = mhd.MHD_create_response_from_buffer!(0, nil, .RESPMEM_PERSISTENT) else { return .NO }
    for (name, value) in extraHeaders { _ = mhd.MHD_add_response_header!(response, name, value) }
    let result = mhd.MHD_queue_response!(connection, status, response)
    mhd.MHD_destroy_response!(response)
    return result
}

/// libmicrohttpd's functions, loaded by `MediaServer.init` (which every use follows).
var mhd: prmhd_table { prmhd_functions().pointee }

extension ConnectionTable.Limits {
    /// libmicrohttpd's own limit sits above ours: connections the table has given way are still
    /// open for the moment their threads take to close them, and libmicrohttpd stops accepting
    /// (so our policy never sees a newcomer) once its limit is reached.
    var daemonTotal: UInt32 { UInt32(clamping: total + 128) }

    /// libmicrohttpd's idle timeout, in whole seconds: the header deadline, rounded up.
    var idleTimeoutSeconds: UInt32 { UInt32(clamping: (headerDeadlineNs + 999_999_999) / 1_000_000_000) }
}
