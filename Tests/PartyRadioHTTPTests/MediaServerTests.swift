import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioHTTP

@Suite("MediaServer (loopback only)", .serialized)
final class MediaServerTests {
    let directory: TemporaryDirectory
    let server: MediaServer
    let filePath: String
    let fileBytes: [UInt8]
    let token: String

    init() throws {
        directory = try TemporaryDirectory()
        filePath = directory.file("song.wav")
        // Any bytes do: the server neither reads nor checks them (its type comes from the name).
        fileBytes = (0..<48_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        try Data(fileBytes).write(to: URL(fileURLWithPath: filePath))
        // A file that must never be reachable, next to the served one.
        try Data("secret".utf8).write(to: URL(fileURLWithPath: directory.file("secret.txt")))
        server = try MediaServer(address: "127.0.0.1", port: 0)
        token = try server.register(path: filePath)
    }

    deinit {
        server.stop()
        directory.cleanup()
    }

    @Test("idle connections from one client cannot starve another's fetch; the extra ones are closed at once")
    func idleConnectionsAreLimitedPerClient() throws {
        // The attacker holds far more connections than its share, from 127.0.0.2.
        let idle = IdleConnections(count: 200, from: "127.0.0.2", port: server.port)
        #expect(idle.descriptors.count == 200)
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token))
        #expect(response.status == 200 && response.body == fileBytes)
        // All but its share were closed by the server.
        let closed = idle.closedByServer()
        #expect(closed >= 200 - Int(server.limits.perAddress))
        #expect(closed < 200)
    }

    @Test("a client that says nothing is closed after the idle timeout")
    func idleTimeout() throws {
        let quick = try MediaServer(address: "127.0.0.1", port: 0, limits: .init(headerDeadlineNs: 1_000_000_000))
        defer { quick.stop() }
        let idle = IdleConnections(count: 3, from: "127.0.0.3", port: quick.port)
        #expect(idle.closedByServer(waitingMs: 10) == 0)
        #expect(idle.closedByServer(waitingMs: 3_000) == 3)
    }

    @Test("binds loopback, reports the kernel's port, builds URLs")
    func binding() {
        #expect(server.port > 0)
        #expect(server.url(token: "abc") == "http://127.0.0.1:\(server.port)/media/abc")
        #expect(server.url(token: "abc", host: "10.99.0.1") == "http://10.99.0.1:\(server.port)/media/abc")
        #expect(token.count == 32)
    }

    @Test("full GET: 200, whole file, audio content type, ranges advertised")
    func fullGet() throws {
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token))
        #expect(response.status == 200)
        #expect(response.body == fileBytes)
        #expect(response.headers["content-type"] == "audio/wav")
        #expect(response.headers["accept-ranges"] == "bytes")
        #expect(response.headers["content-length"] == String(fileBytes.count))
    }

    @Test("Range GET mid-file: 206 with Content-Range and exactly those bytes")
    func rangeGet() throws {
        let path = MediaServer.path(token: token)
        let middle = try RawHTTP.get(port: server.port, path: path, headers: ["Range": "bytes=1000-1999"])
        #expect(middle.status == 206)
        #expect(middle.headers["content-range"] == "bytes 1000-1999/\(fileBytes.count)")
        #expect(middle.body == Array(fileBytes[1000...1999]))
        let open = try RawHTTP.get(port: server.port, path: path, headers: ["Range": "bytes=4000-"])
        #expect(open.status == 206)
        #expect(open.body == Array(fileBytes[4000...]))
        let suffix = try RawHTTP.get(port: server.port, path: path, headers: ["Range": "bytes=-10"])
        #expect(suffix.body == Array(fileBytes.suffix(10)))
    }

    @Test("unsatisfiable range: 416 with the size")
    func badRange() throws {
        let response = try RawHTTP.get(
            port: server.port, path: MediaServer.path(token: token), headers: ["Range": "bytes=\(fileBytes.count)-"])
        #expect(response.status == 416)
        #expect(response.headers["content-range"] == "bytes */\(fileBytes.count)")
        #expect(response.body.isEmpty)
    }

    @Test("HEAD: headers only")
    func head() throws {
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token), method: "HEAD")
        #expect(response.status == 200)
        #expect(response.headers["content-length"] == String(fileBytes.count))
        #expect(response.body.isEmpty)
    }

    @Test("only GET and HEAD")
    func methods() throws {
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token), method: "DELETE")
        #expect(response.status == 405)
    }

    @Test(
        "unregistered and hostile paths: 404, nothing from disk",
        arguments: [
            "/media/0123456789abcdef0123456789abcdef", "/", "/media/", "/media", "/secret.txt",
            "/media/../secret.txt", "/media/%2e%2e/secret.txt", "/media/..%2fsecret.txt", "/media/%2E%2E%2Fsecret.txt",
            "/../../../../etc/passwd", "/media/../../../../etc/passwd", "/media//etc/passwd", "/etc/passwd",
            "/media/TOKEN/../secret.txt", "/media/TOKEN/", "/media/TOKEN/x", "/media/TOKEN%2f..",
            "//media/TOKEN",
        ])
    func hostile(path: String) throws {
        let response = try RawHTTP.get(port: server.port, path: path.replacingOccurrences(of: "TOKEN", with: token))
        #expect(response.status == 404 || response.status == 400, "\(path) gave \(response.status)")
        #expect(!String(decoding: response.body, as: UTF8.self).contains("secret"))
        #expect(!String(decoding: response.body, as: UTF8.self).contains("root:"))
    }

    @Test("a NUL after the token (MHD unescapes %00, C sees the token) still reaches only that file")
    func nulSuffix() throws {
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token) + "%00/../secret.txt")
        #expect(response.status == 200 || response.status == 404)
        if response.status == 200 { #expect(response.body == fileBytes) }
    }

    @Test("unregistering stops serving; bad tokens and non-files are refused at registration")
    func registration() throws {
        let other = try server.register(path: filePath, token: "track-1")
        #expect(try RawHTTP.get(port: server.port, path: "/media/track-1").status == 200)
        server.unregister(token: other)
        #expect(try RawHTTP.get(port: server.port, path: "/media/track-1").status == 404)
        #expect(throws: MediaServerError.self) { try self.server.register(path: self.filePath, token: "../x") }
        #expect(throws: MediaServerError.self) { try self.server.register(path: self.directory.path) }
        #expect(throws: MediaServerError.self) { try self.server.register(path: self.directory.file("missing.mp3")) }
    }

    @Test("refuses a non-numeric address")
    func badAddress() {
        #expect(throws: MediaServerError.self) { try MediaServer(address: "localhost", port: 0) }
        // A zone must name an interface, and only a link-local address has one.
        #expect(throws: MediaServerError.self) { try MediaServer(address: "fe80::1%no-such-if0", port: 0) }
    }

    @Test("binds IPv6 loopback; URLs write IPv6 in brackets and a zone as %25")
    func ipv6() throws {
        let v6 = try MediaServer(address: "::1", port: 0)
        #expect(v6.url(token: "abc") == "http://[::1]:\(v6.port)/media/abc")
        #expect(v6.url(token: "abc", host: "fd99:10::1") == "http://[fd99:10::1]:\(v6.port)/media/abc")
        #expect(v6.url(token: "abc", host: "fe80::1%eth0") == "http://[fe80::1%25eth0]:\(v6.port)/media/abc")
    }

    @Test("a web request with two Content-Length headers is refused with 400, even when they agree")
    func duplicateContentLength() throws {
        server.setWebHandler(Echo())
        func post(_ lengths: String) throws -> Int {
            let request =
                "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n\(lengths)\r\ntext=hi"
            return try RawHTTP.exchange(port: server.port, request: request).status
        }
        #expect(try post("Content-Length: 7\r\n") == 200)
        for lengths in [
            "Content-Length: 7\r\nContent-Length: 7\r\n", "Content-Length: 7\r\ncontent-length: 7\r\n",
            "Content-Length: 7\r\nContent-Length: 0\r\n", "Content-Length: 0\r\nContent-Length: 7\r\n",
        ] {
            #expect(try post(lengths) == 400, "\(lengths.debugDescription)")
        }
    }
}

/// Answers every web request with its body.
private final class Echo: WebHandler {
    func respond(to request: WebRequest) -> WebResponse { WebResponse(status: 200, body: .bytes(request.body)) }
}
