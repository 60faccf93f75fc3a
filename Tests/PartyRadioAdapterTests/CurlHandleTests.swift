import CatalogTestSupport
import Foundation
import Testing

@testable import PartyRadioCurl

/// The libcurl adapter against the catalog fixture server on 127.0.0.1 (loopback only), which
/// serves its previews (a WAV per path) as a CDN does: whole, or one byte range.
@Suite("libcurl adapter (loopback fixture)", .serialized)
final class CurlHandleTests {
    let server: FixtureServer

    init() throws { server = try FixtureServer(options: ["--previews", "127.0.0.1"]) }
    deinit { server.stop() }

    var preview: String { server.baseURL + "/itunes-assets/AudioPreview125/curl-test.m4a" }

    func request(_ url: String, headers: [(String, String)] = [], timeout: Double = 10) -> CurlRequest {
        CurlRequest(url: url, headers: headers, timeout: timeout, connectTimeout: 5)
    }

    @Test("A GET hands over the status, each header field and the whole body")
    func get() throws {
        let handle = try CurlHandle()
        let receiver = Recorder()
        let outcome = handle.perform(request(preview), into: receiver)
        #expect(outcome.failure == nil)
        #expect(outcome.status == 200)
        #expect(receiver.statuses == [200])
        // A RIFF/WAVE file as long as its Content-Length said.
        #expect(receiver.body.starts(with: Array("RIFF".utf8)))
        #expect(receiver.fields["content-length"] == String(receiver.body.count))
        #expect(receiver.body.count > 1_000_000)
        #expect(outcome.effectiveURL == preview)
        #expect(outcome.connectionsOpened == 1)
    }

    @Test("A Range GET brings exactly those bytes of the file, on the connection kept from the first")
    func rangeGet() throws {
        let handle = try CurlHandle()
        let whole = Recorder()
        _ = handle.perform(request(preview), into: whole)
        let part = Recorder()
        let outcome = handle.perform(request(preview, headers: [("Range", "bytes=1000-1999")]), into: part)
        #expect(outcome.failure == nil)
        #expect(outcome.status == 206)
        #expect(part.fields["content-range"] == "bytes 1000-1999/\(whole.body.count)")
        #expect(part.body.count == 1000)
        #expect(part.body.elementsEqual(whole.body[1000...1999]))
        #expect(outcome.connectionsOpened == 0, "the handle keeps its connection")
    }

    @Test("A transfer longer than its timeout fails with CURLE_OPERATION_TIMEDOUT (28) in about that time")
    func timeout() throws {
        let started = Date()
        // The fixture answers this search after 3 s.
        let outcome = try CurlHandle().perform(
            request(server.baseURL + "/search?term=slow", timeout: 0.5), into: Recorder())
        let seconds = Date().timeIntervalSince(started)
        #expect(outcome.failure?.code == 28)
        #expect(seconds >= 0.4 && seconds < 2.5, "took \(seconds) s")
    }

    @Test("An error status is an answer, not a failure: 404 with its body")
    func badStatus() throws {
        let receiver = Recorder()
        let outcome = try CurlHandle().perform(request(server.baseURL + "/search?term=notfound"), into: receiver)
        #expect(outcome.failure == nil)
        #expect(outcome.status == 404)
        #expect(receiver.statuses == [404])
        #expect(String(decoding: receiver.body, as: UTF8.self).contains("Not Found"))
    }

    @Test(
        "A receiver stops a transfer: refusing bytes is CURLE_WRITE_ERROR (23), asking to stop CURLE_ABORTED_BY_CALLBACK (42)"
    )
    func receiverStops() throws {
        let handle = try CurlHandle()
        let full = Recorder()
        full.acceptsBody = false
        #expect(handle.perform(request(preview), into: full).failure?.code == 23)
        let cancelled = Recorder()
        cancelled.continues = false
        let started = Date()
        // Would take 120 s: the progress callback's "stop" ends it at once.
        let outcome = handle.perform(request(server.baseURL + "/search?term=stall", timeout: 300), into: cancelled)
        #expect(outcome.failure?.code == 42)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("A refused connection is CURLE_COULDNT_CONNECT (7), with libcurl's sentence")
    func refused() throws {
        // A port the fixture just freed: nothing listens there any more.
        let gone = try FixtureServer()
        let url = gone.baseURL + "/search?term=x"
        gone.stop()
        let outcome = try CurlHandle().perform(request(url), into: Recorder())
        #expect(outcome.failure?.code == 7)
        #expect(outcome.failure?.detail.isEmpty == false)
        #expect(outcome.status == 0)
    }
}

/// Writes down what the callbacks hand over.
private final class Recorder: CurlReceiver {
    var statuses: [Int] = []
    var fields: [String: String] = [:]
    var body: [UInt8] = []
    var acceptsBody = true
    var continues = true

    func received(status: Int) { statuses.append(status) }
    func received(field name: String, value: String) { fields[name] = value }
    func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard acceptsBody else { return false }
        body.append(contentsOf: bytes)
        return true
    }
    func shouldContinue() -> Bool { continues }
}
