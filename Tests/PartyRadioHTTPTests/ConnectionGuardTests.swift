import Foundation
import Glibc
import PartyRadioCore
import Testing

@testable import PartyRadioHTTP

/// The server's connection policy on real libmicrohttpd connections over loopback: one machine
/// with many addresses (127.0.1.x here, the machine lookup says they are one) fills it, and
/// everybody else still gets in.
@Suite("MediaServer under one machine with many addresses (loopback only)", .serialized)
final class ConnectionGuardTests {
    let directory: TemporaryDirectory
    let filePath: String
    let fileBytes: [UInt8]

    /// Every loopback address but 127.0.0.1 is the attacker's machine.
    static let machineOf: @Sendable (String) -> String? = { $0 == "127.0.0.1" ? nil : "02:00:00:00:00:66" }

    init() throws {
        directory = try TemporaryDirectory()
        filePath = directory.file("song.wav")
        fileBytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(fileBytes).write(to: URL(fileURLWithPath: filePath))
    }

    deinit { directory.cleanup() }

    func stillOpen(_ idle: [IdleConnections]) -> Int {
        idle.map { $0.descriptors.count - $0.closedByServer(waitingMs: 5) }.reduce(0, +)
    }

    @Test("aliases of one machine fill the server: its next connection is refused, a guest's fetch gets in")
    func aliasesGiveWayToAGuest() throws {
        let server = try MediaServer(
            address: "127.0.0.1", port: 0, limits: .init(total: 64), machineOf: Self.machineOf)
        defer { server.stop() }
        let token = try server.register(path: filePath)
        // 8 aliases, 8 connections each: the server is full.
        let aliases = (1...8).map { IdleConnections(count: 8, from: "127.0.1.\($0)", port: server.port) }
        usleep(300_000)
        #expect(stillOpen(aliases) == 64)
        // A ninth alias: its machine holds the most, so it is refused.
        let ninth = IdleConnections(count: 4, from: "127.0.1.9", port: server.port)
        usleep(300_000)
        #expect(ninth.closedByServer(waitingMs: 200) == 4)
        // A guest from another machine: one of the attacker's connections gives way.
        let response = try RawHTTP.get(port: server.port, path: MediaServer.path(token: token))
        #expect(response.status == 200 && response.body == fileBytes)
        usleep(200_000)
        #expect(stillOpen(aliases) == 63)
    }

    @Test("a connection that sends a header line now and then is closed at the header deadline")
    func slowHeadersHaveADeadline() throws {
        let server = try MediaServer(
            address: "127.0.0.1", port: 0, limits: .init(headerDeadlineNs: 1_000_000_000), machineOf: { _ in nil })
        defer { server.stop() }
        let slow = IdleConnections(count: 1, from: "127.0.2.1", port: server.port)
        slow.send("GET / HTTP/1.1\r\n")
        // Never idle for a second: the idle timeout alone would keep it for ever.
        for n in 0..<6 {
            usleep(300_000)
            slow.send("X-Slow-\(n): 1\r\n")
        }
        #expect(slow.closedByServer(waitingMs: 5) == 0)
        // The next decision (a newcomer) closes it: 1.8 s without a whole request.
        let newcomer = IdleConnections(count: 1, from: "127.0.2.2", port: server.port)
        #expect(slow.closedByServer(waitingMs: 500) == 1)
        #expect(newcomer.closedByServer(waitingMs: 5) == 0)
    }

    @Test("event streams have a share of their own: the fullest machine's newest is refused, a guest's gets in")
    func streamsHaveACapOfTheirOwn() throws {
        let server = try MediaServer(
            address: "127.0.0.1", port: 0, limits: .init(total: 64, streams: 4), machineOf: Self.machineOf)
        defer { server.stop() }
        server.setWebHandler(Pinger())
        let streams = (1...4).map { StreamClient(from: "127.0.3.\($0)", port: server.port) }
        #expect(streams.map(\.status) == [200, 200, 200, 200])
        let fifth = StreamClient(from: "127.0.3.5", port: server.port)
        #expect(fifth.status == 503)
        let guest = StreamClient(from: "127.0.0.1", port: server.port)
        #expect(guest.status == 200)
        usleep(300_000)
        #expect(streams.filter { $0.isClosedByServer() }.count == 1)
        #expect(!guest.isClosedByServer())
    }
}

/// Answers every path with an event stream that sends a ping every 100 ms.
private final class Pinger: WebHandler {
    final class Stream: WebStream {
        func next(clientGone: () -> Bool) -> [UInt8]? {
            for _ in 0..<4 {
                if clientGone() { return nil }
                usleep(25_000)
            }
            return Array("event: ping\ndata: {}\n\n".utf8)
        }
    }

    func respond(to request: WebRequest) -> WebResponse {
        WebResponse(status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream(Stream()))
    }
}

/// A client holding an event stream open from a loopback address.
private final class StreamClient {
    let descriptor: Int32
    private(set) var status = 0

    init(from source: String, port: UInt16) {
        let idle = IdleConnections(count: 1, from: source, port: port)
        descriptor = idle.descriptors.first.map { dup($0) } ?? -1
        guard descriptor >= 0 else { return }
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 12 else { return }
        status = Int(String(decoding: buffer[9..<12], as: UTF8.self)) ?? 0
    }

    /// Whether the server closed the stream within 0.4 s: the end of file comes once the pings
    /// already sent are read (a live stream keeps sending them).
    func isClosedByServer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(0.4)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) == 1 else { continue }
            if recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) <= 0 { return true }
        }
        return false
    }

    deinit { if descriptor >= 0 { close(descriptor) } }
}
