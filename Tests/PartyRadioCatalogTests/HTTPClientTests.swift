import CatalogTestSupport
import Testing

@testable import PartyRadioCatalog

@Suite struct HTTPClientTests {
    let server = FixtureServer.shared

    @Test func sendsUserAgentAndReusesTheConnection() async throws {
        let client = HTTPClient()
        let first = try await client.get(HTTPRequest(url: server.baseURL + "/search?term=useragent"))
        #expect(first.status == 200)
        let page = try ITunesDecoder.decode(first.body)
        #expect(page.tracks.first?.title == "partyradio/0.1")
        let second = try await client.get(HTTPRequest(url: server.baseURL + "/search?term=useragent"))
        #expect(second.connectionsOpened == 0)
    }

    @Test func gzipIsAskedForAndUndone() async throws {
        let response = try await HTTPClient().get(HTTPRequest(url: server.baseURL + "/search?term=gzip"))
        #expect(response.status == 200)
        #expect(try ITunesDecoder.decode(response.body).tracks.count == 4)
    }

    @Test func followsRedirects() async throws {
        let response = try await HTTPClient().get(HTTPRequest(url: server.baseURL + "/search?term=redirect"))
        #expect(response.status == 200)
        #expect(response.effectiveURL.contains("term=daft+punk"))
    }

    @Test func statusesComeBackForTheCallerToJudge() async throws {
        let response = try await HTTPClient().get(HTTPRequest(url: server.baseURL + "/search?term=ratelimited"))
        #expect(response.status == 429)
        #expect(response.headers["retry-after"] == "120")
    }

    @Test func timeoutIsAnError() async {
        do {
            _ = try await HTTPClient().get(HTTPRequest(url: server.baseURL + "/search?term=slow", timeout: 0.5))
            Issue.record("slow answer accepted")
        } catch {
            #expect(error.code == .timeout)
        }
    }

    @Test func cancellingTheTaskStopsTheTransfer() async {
        let start = Catalog.systemTime()
        let url = server.baseURL + "/search?term=stall"
        let task = Task { try await HTTPClient().get(HTTPRequest(url: url, timeout: 300)) }
        try? await Task.sleep(nanoseconds: 200_000_000)
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("cancelled transfer finished")
        } catch let error as CatalogError {
            #expect(error.code == .cancelled)
        } catch {
            Issue.record("unexpected \(error)")
        }
        // The server answers only after 120 s: finishing long before that proves the cancel took
        // (the bound is loose on purpose: a loaded machine may be slow, never that slow).
        #expect(Catalog.systemTime() - start < 60)
    }

    @Test func shortBodyIsAnError() async {
        do {
            _ = try await HTTPClient().get(HTTPRequest(url: server.baseURL + "/search?term=truncated"))
            Issue.record("truncated body accepted")
        } catch {
            #expect(error.code == .transfer)
            #expect(error.message.contains("broke off"))
        }
    }

    @Test func refusedConnectionIsAnError() async throws {
        let closed = try FixtureServer()
        let url = closed.baseURL + "/search?term=x"
        closed.stop()
        do {
            _ = try await HTTPClient().get(HTTPRequest(url: url))
            Issue.record("closed port answered")
        } catch {
            #expect(error.code == .connect)
            #expect(error.message.contains("127.0.0.1"))
        }
    }

    @Test func oversizedBodyIsAnError() async {
        do {
            _ = try await HTTPClient(maximumBodyBytes: 1000).get(HTTPRequest(url: server.baseURL + "/search?term=big"))
            Issue.record("oversized body accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func onlyHTTPSchemes() async {
        do {
            _ = try await HTTPClient().get(HTTPRequest(url: "file:///etc/passwd"))
            Issue.record("file URL fetched")
        } catch {
            #expect(error.code == .connect)
        }
    }
}
