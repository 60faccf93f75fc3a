import Foundation
import Glibc

// Support for the HTTP server's and the QR code's tests: a scratch directory, raw HTTP over loopback
// (what a listener's player or a hostile client sends), and idle connections.

/// A fresh temporary directory, removed by `cleanup()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/partyradio-http-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// A raw HTTP/1.1 exchange over loopback: what a listener's player or a hostile client sends.
struct RawHTTPResponse {
    var status: Int
    var headers: [String: String]  // lower-cased names
    var body: [UInt8]
}

enum RawHTTP {
    /// Sends `request` verbatim to 127.0.0.1:`port` and reads until the server closes.
    static func exchange(port: UInt16, request: String) throws -> RawHTTPResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw POSIXError(.EIO) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return try parse(received)
    }

    static func get(port: UInt16, path: String, method: String = "GET", headers: [String: String] = [:]) throws
        -> RawHTTPResponse
    {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        return try exchange(port: port, request: request + "\r\n")
    }

    static func parse(_ data: [UInt8]) throws -> RawHTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, data.count - 3)).first(where: { Array(data[$0..<$0 + 4]) == separator }) else {
            throw POSIXError(.EBADMSG)
        }
        let head = String(decoding: data[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw POSIXError(.EBADMSG) }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return RawHTTPResponse(status: status, headers: headers, body: Array(data[(end + 4)...]))
    }
}

/// Idle TCP connections held open from one loopback address: a guest who connects and sends nothing.
final class IdleConnections {
    private(set) var descriptors: [Int32] = []

    /// Opens `count` connections from `source` (a 127.x address) to 127.0.0.1:`port`.
    init(count: Int, from source: String, port: UInt16) {
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { break }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = port.bigEndian
            remote.sin_addr.s_addr = inet_addr("127.0.0.1")
            let ok = withUnsafePointer(to: &local) { l in
                withUnsafePointer(to: &remote) { r in
                    l.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    } == 0
                        && r.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        } == 0
                }
            }
            if ok { descriptors.append(fd) } else { close(fd) }
        }
    }

    /// Sends `text` on every one of them (a slow client's next header line).
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        for fd in descriptors { _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// How many of them the server has closed (a read says end of file at once).
    func closedByServer(waitingMs: Int32 = 300) -> Int {
        var closed = 0
        for fd in descriptors {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, waitingMs) == 1 else { continue }
            var byte: UInt8 = 0
            if recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { closed += 1 }
        }
        return closed
    }

    deinit { for fd in descriptors { close(fd) } }
}
