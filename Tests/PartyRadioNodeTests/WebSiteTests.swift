import Foundation
import PartyRadioCore
import PartyRadioHTTP
import PartyRadioSecurity
import Synchronization
import Testing

@testable import PartyRadioNode

/// The web page's request handling without a network: the page's policy, the write checks, the
/// DJ's commands, and any request at all answered with a documented status, never a crash.
@Suite struct WebSiteTests {
    func site(timeout: Double = 0.05) -> (WebSite, WebHub, Inbox<NodeInput>) {
        let hub = WebHub()
        hub.publish("{\"station\":\"Test\"}", votes: VoteBook())
        let inbox = Inbox<NodeInput>()
        let site = WebSite(
            hub: hub, inbox: inbox, clock: NodeClock(), catalog: nil, address: "10.0.0.1", port: 8080,
            answerTimeout: timeout)
        return (site, hub, inbox)
    }

    @Test func thePageRunsOnlyItsOwnScriptAndStyle() {
        let html = WebPage.html
        #expect(html.components(separatedBy: "<script>").count == 2 && !html.contains("<script "))
        #expect(html.components(separatedBy: "<style>").count == 2 && !html.contains("<style "))
        #expect(!html.contains("<link"), "the style is inline, not linked")
        #expect(!html.contains("http://") && !html.contains("https://"), "no outside assets")
        #expect(!html.contains("innerHTML") && !html.contains("insertAdjacentHTML") && !html.contains("document.write"))
        let policy = WebSite.contentSecurityPolicy(for: html)
        let open = html.range(of: "<script>")!
        let close = html.range(of: "</script>")!
        let script = Array(html[open.upperBound..<close.lowerBound].utf8)
        let hash = Data(Sodium.sha256(script)).base64EncodedString()
        #expect(policy.contains("script-src 'sha256-\(hash)'") && policy.hasPrefix("default-src 'none'"))
    }

    /// node, where it is installed: the page's script must parse, or the page does nothing at all.
    static let node = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        .map { "\($0)/node" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The script the page runs (the one between its `<script>` tags) is valid JavaScript.
    @Test(.enabled(if: node != nil, "node is not installed")) func thePageScriptParses() throws {
        let html = WebPage.html
        let open = try #require(html.range(of: "<script>"))
        let close = try #require(html.range(of: "</script>"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-page-\(getpid()).js")
        try String(html[open.upperBound..<close.lowerBound]).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.node))
        process.arguments = ["--check", file.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
    }

    @Test func writesComeOnlyFromThePage() {
        func request(_ headers: [String: String]) -> WebRequest {
            WebRequest(method: "POST", path: "/api/chat", clientAddress: "10.0.0.9", body: [], headers: headers)
        }
        let form = "application/x-www-form-urlencoded"
        #expect(
            WebSite.checkWrite(
                request(["host": "10.0.0.1:8080", "origin": "http://10.0.0.1:8080", "content-type": form])) == nil)
        #expect(
            WebSite.checkWrite(
                request(["host": "10.0.0.1:8080", "sec-fetch-site": "same-origin", "content-type": form])) == nil)
        #expect(WebSite.checkWrite(request(["host": "10.0.0.1:8080", "content-type": form]))?.status == 403)
        #expect(
            WebSite.checkWrite(request(["host": "10.0.0.1:8080", "origin": "http://evil", "content-type": form]))?
                .status == 403)
        #expect(WebSite.checkWrite(request(["origin": "http://", "content-type": form]))?.status == 403)
        #expect(
            WebSite.checkWrite(request(["host": "h", "origin": "http://h", "content-type": "text/plain"]))?.status
                == 415)
    }

    @Test func theDJsCommands() {
        let unknown = ControlError("Unknown DJ command.")
        #expect(WebSite.control("skip", nil) == .success(.next))
        #expect(WebSite.control("seek", "42") == .success(.seek(toNs: 42_000_000_000)))
        #expect(WebSite.control("crowd-skip", "30") == .success(.crowdSkip(percent: 30)))
        #expect(WebSite.control("approve", "#3") == .success(.approve(.number(3))))
        #expect(WebSite.control("mute", " Bob ") == .success(.mute("Bob")))
        #expect(WebSite.control("speaker", "Living Room volume 30") == .success(.speaker("Living Room", .volume(30))))
        #expect(
            WebSite.control("speaker", "Kitchen volume 300")
                == .failure(ControlError("A speaker's volume is 0 to 100; 300 is out of range.")))
        #expect(WebSite.control("seek", "") == .failure(unknown))
        #expect(WebSite.control("quit", nil) == .failure(unknown), "the page cannot end the station")
        #expect(WebSite.control("search", "x") == .failure(unknown), "nor search or add for the DJ")
        #expect(WebSite.control("mute", "Bob\nquit") == .failure(unknown), "one line only")
        #expect(WebSite.control("approve", String(repeating: "1", count: 101)) == .failure(unknown))
        // An argument that does not fit is refused with what the DJ would read on its terminal.
        #expect(
            WebSite.control("crowd-skip", "101")
                == .failure(
                    ControlError("'crowd-skip' takes a share of the room from 0 (off) to 100, e.g. 'crowd-skip 50'.")))
        #expect(
            ConstantTime.equal("abc", "abc") && !ConstantTime.equal("abc", "abd") && !ConstantTime.equal("abc", "ab"))
    }

    @Test func aGuestsActionGoesToTheDJAndItsAnswerComesBack() throws {
        let (site, hub, inbox) = site(timeout: 5)
        let request = WebRequest(
            method: "POST", path: "/api/vote", clientAddress: "10.0.0.9", body: Array("track=t1&choice=up".utf8),
            headers: [
                "host": "10.0.0.1:8080", "origin": "http://10.0.0.1:8080",
                "content-type": "application/x-www-form-urlencoded",
            ])
        // The DJ's side: take the action from the inbox and answer it.
        let dj = Thread {
            for _ in 0..<200 {
                for case .web(let action) in inbox.drain() {
                    let ack = VoteAck(
                        voteSequence: action.sequence, status: .counted, trackID: "t1", choice: .up,
                        tally: Tally(up: 1, down: 0), listenerCount: 0)
                    hub.answer(action.ticket ?? 0, .message(.voteAck(ack)))
                    return
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        dj.start()
        let response = site.respond(to: request)
        guard case .bytes(let body) = response.body else {
            Issue.record("no body")
            return
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            response.status == 200 && text.contains("\"status\":\"counted\"") && text.contains("\"up\":1"), "\(text)")
        #expect(response.headers.contains { $0.0 == "Set-Cookie" && $0.1.hasPrefix("pr_guest=") })
    }

    /// A browser keeps its cookie when the DJ restarts; its guest key is a hash of the cookie
    /// alone, so the restarted DJ (a new site, nothing carried over but its saved state) sees the
    /// same guest: its earlier vote is changed, not counted twice.
    @Test func aBrowserIsTheSameGuestAfterTheDJRestarts() throws {
        func guest(_ site: WebSite, _ inbox: Inbox<NodeInput>, cookie: String?) throws -> PublicKey {
            let headers = [
                "host": "10.0.0.1:8080", "origin": "http://10.0.0.1:8080",
                "content-type": "application/x-www-form-urlencoded",
            ]
            let response = site.respond(
                to: WebRequest(
                    method: "POST", path: "/api/vote", clientAddress: "10.0.0.9",
                    body: Array("track=t1&choice=up".utf8), headers: headers,
                    cookies: cookie.map { [WebSite.guestCookie: $0] } ?? [:]))
            #expect(response.status == 503, "nobody answers here: the action only goes to the inbox")
            var actions: [WebAction] = []
            for case .web(let action) in inbox.drain() { actions.append(action) }
            return try #require(actions.first).guest
        }
        let cookie = Base64URL.encode([UInt8](repeating: 7, count: 32))
        let (before, _, firstInbox) = site()
        let (after, _, secondInbox) = site()
        let first = try guest(before, firstInbox, cookie: cookie)
        #expect(try guest(after, secondInbox, cookie: cookie) == first)
        #expect(try guest(after, secondInbox, cookie: Base64URL.encode([UInt8](repeating: 8, count: 32))) != first)
        #expect(try guest(after, secondInbox, cookie: nil) != first, "no cookie: a new guest")
    }

    /// The name cookie is the page's to send, not its script's to read (the page shows `you.name`):
    /// `HttpOnly` and `SameSite=Strict` as the guest cookie. A browser may send any cookie, so a name
    /// read from it is cleaned and cut as every name from the network is, `you.name` included.
    @Test func theNameCookieIsHttpOnlyAndWhatItHoldsIsCleanedAndCut() throws {
        let (site, _, _) = site()
        let headers = [
            "host": "10.0.0.1:8080", "origin": "http://10.0.0.1:8080",
            "content-type": "application/x-www-form-urlencoded",
        ]
        let named = site.respond(
            to: WebRequest(
                method: "POST", path: "/api/name", clientAddress: "10.0.0.9", body: Array("name=Sam".utf8),
                headers: headers))
        let cookie = named.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix("pr_name=") }?.1 ?? ""
        let attributes = cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(attributes.contains("HttpOnly") && attributes.contains("SameSite=Strict"), "\(cookie)")
        // A cookie made by hand: 300 letters, a bidi override and an escape sequence.
        let hostile = "\u{202E}\u{1B}[31m" + String(repeating: "W", count: 300)
        let state = site.respond(
            to: WebRequest(
                method: "GET", path: "/api/state", clientAddress: "10.0.0.9", headers: ["host": "10.0.0.1:8080"],
                cookies: [
                    "pr_guest": Base64URL.encode([UInt8](repeating: 7, count: 32)),
                    "pr_name": Base64URL.encode(Array(hostile.utf8)),
                ]))
        guard case .bytes(let body) = state.body,
            let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let you = object["you"] as? [String: Any]
        else {
            Issue.record("no state with you in it")
            return
        }
        #expect(you["name"] as? String == String(repeating: "W", count: GuestName.maxCharacters))
    }

    /// Every key of every JSON object the page gets is snake_case (docs/WEB.md), as in the CLI's
    /// JSON: the page state with a playing track, a request and a chat line in it, the answers to
    /// guests' actions, the clock, a search and a refusal.
    @Test func everyKeyThePageGetsIsSnakeCase() throws {
        let key = PublicKey(bytes: [UInt8](repeating: 9, count: 32))!
        let id = StationID(rawValue: 0x1234_5678)
        let tracks = [
            Track(
                id: "local:a", title: "First", artist: "A", album: "X", durationMs: 10_000,
                source: "http://10.0.0.1:8080/media/a"),
            Track(id: "1440857781", title: "Second", artist: "B", album: "", durationMs: 20_000, source: "https://x/b"),
        ]
        let t0 = LocalTime(ns: 1_000_000_000_000)
        var machine = DJMachine(
            configuration: DJMachine.Configuration(
                name: "Rooftop", advert: StationAdvert(stationID: id, group: id.multicastGroup, publicKey: key),
                queue: tracks, port: 40_000, interfaceName: "eth0", address: "10.0.0.1", playsAudio: true),
            verifier: SodiumVerifier(), now: t0)
        _ = machine.handle(.start, at: t0)
        func web(_ message: Message, sequence: UInt64) -> [Effect] {
            let guest = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
            let action = WebAction(message: message, guest: guest, address: "10.0.0.7", sequence: sequence, ticket: 1)
            return machine.handle(.web(action), at: t0 + Nanos.ms(Int64(sequence)))
        }
        var answers: [Message] = []
        var later: [JSON] = []
        for (sequence, message) in [
            Message.requestSend(RequestSend(requestID: 1, name: "Ann", wanted: .library("second"))),
            .chatSend(ChatSend(messageID: 2, name: "Ann", text: "hi")),
            .vote(Vote(trackID: "local:a", choice: .up)),
            .requestVote(RequestVote(queueID: 1, choice: .up)),
        ].enumerated() {
            for case .webReply(_, let reply) in web(message, sequence: UInt64(sequence + 1)) {
                switch reply {
                case .message(let answer): answers.append(answer)
                case .voteWeighsLater(let ack, let ms): later.append(WebAnswer.json(ack, weighsInMs: ms))
                case .searchResults, .djOutcome: break
                }
            }
        }
        #expect(answers.count + later.count == 4 && later.count == 1, "the fresh guest's vote weighs later")
        let state = WebState.json(machine, at: t0, mediaPrefix: "http://10.0.0.1:8080/media/", artwork: true)
        #expect(state.contains("\"entries\":[{") && state.contains("\"chat\":[{"), "\(state)")
        // A search goes through the machine: it asks the catalog, and answers once the catalog has.
        let asked = machine.handle(.webSearch("first", ticket: 9), at: t0 + Nanos.ms(10))
        #expect(asked.contains { if case .catalog(.webSearch("first", ticket: 9)) = $0 { true } else { false } })
        let answered = machine.handle(
            .catalog(.webResults(term: "first", tracks: [tracks[1]], status: .failed("offline"), ticket: 9)),
            at: t0 + Nanos.ms(20))
        let searchReply = try #require(
            answered.compactMap { if case .webReply(9, let reply) = $0 { reply } else { nil } }.first)
        #expect(
            searchReply
                == .searchResults(
                    WebSearchResults(library: [tracks[0]], catalog: [tracks[1]], catalogStatus: .failed("offline"))))

        let (site, hub, inbox) = site(timeout: 5)
        // The DJ's side of the search: the machine's answer, to whichever ticket the site gives.
        let dj = Thread {
            for _ in 0..<500 {
                for case .webSearch(_, let ticket) in inbox.drain() { return hub.answer(ticket, searchReply) }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        dj.start()
        hub.publish(state, votes: VoteBook())
        func body(_ path: String, query: [String: String] = [:]) -> String {
            let response = site.respond(
                to: WebRequest(
                    method: "GET", path: path, clientAddress: "10.0.0.9", body: [], headers: ["host": "10.0.0.1:8080"],
                    query: query))
            guard case .bytes(let bytes) = response.body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        let documents =
            [
                state, body("/api/state"), body("/api/time"), body("/api/search", query: ["q": "first"]),
                body("/nothing"),
            ]
            + answers.map { WebAnswer.json($0).rendered } + later.map(\.rendered)
        var keys: Set<String> = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                keys.formUnion(object.keys)
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        for document in documents { collect(try JSONSerialization.jsonObject(with: Data(document.utf8))) }
        #expect(keys.isSuperset(of: ["duration_ms", "at_us", "queue_id", "dj_us", "results", "tally"]), "\(keys)")
        let camel = keys.filter { key in
            key.first?.isLowercase != true
                || !key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        }
        #expect(camel.isEmpty, "not snake_case: \(camel.sorted())")
    }

    @Test func anyRequestGetsADocumentedStatus() {
        let (site, _, _) = site()
        var random = SplitMix64(seed: 7)
        let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "", "G\u{0}ET"]
        let paths = [
            "/", "/api/state", "/api/time", "/api/search", "/api/vote", "/api/request", "/api/request-vote",
            "/api/chat",
            "/api/name", "/api/dj", "/api/listen", "/qr.svg", "/art/", "/art/123", "/art/local:x", "/nothing", "//",
            "/api/../etc/passwd", "/media/x",
        ]
        let bytes: [UInt8] = Array("=&%+az09:".utf8) + [0, 0xC3, 0xFF, 0x0A]
        for _ in 0..<3_000 {
            let method = methods[Int(random.next() % UInt64(methods.count))]
            let path = paths[Int(random.next() % UInt64(paths.count))]
            let body = (0..<Int(random.next() % 48)).map { _ in bytes[Int(random.next() % UInt64(bytes.count))] }
            var headers = ["host": "10.0.0.1:8080"]
            if random.next() % 2 == 0 { headers["origin"] = "http://10.0.0.1:8080" }
            if random.next() % 2 == 0 { headers["content-type"] = "application/x-www-form-urlencoded" }
            if random.next() % 3 == 0 { headers["x-dj-token"] = "00" }
            let query = random.next() % 2 == 0 ? ["q": String(decoding: body, as: UTF8.self)] : [:]
            let cookies = random.next() % 2 == 0 ? ["pr_guest": String(decoding: body, as: UTF8.self)] : [:]
            let response = site.respond(
                to: WebRequest(
                    method: method, path: path, clientAddress: "10.0.0.9", body: body, headers: headers, query: query,
                    cookies: cookies))
            #expect([200, 202, 400, 403, 404, 405, 415, 500, 503].contains(response.status), "\(method) \(path)")
        }
    }

    /// The speakers are the DJ's only: `/api/speakers` wants the DJ's token, and gives what the
    /// DJ's runtime published last (names cleaned again).
    @Test func theSpeakersAreTheDJsOnly() throws {
        let (site, hub, _) = site()
        let key = try #require(PublicKey(bytes: [UInt8](repeating: 7, count: 32)))
        hub.publish(speakers: [
            SpeakerBook.Entry(
                key: key, name: "Kitchen\u{1B}[2J", room: "Down", host: "10.0.0.7",
                address: PeerAddress(host: "10.0.0.7", port: 4000), settings: SpeakerSettings(volume: 30),
                playing: true, lastControl: 0, lastHeard: LocalTime(ns: 0))
        ])
        func get(_ headers: [String: String]) -> WebResponse {
            site.respond(
                to: WebRequest(
                    method: "GET", path: "/api/speakers", clientAddress: "10.0.0.9", body: [],
                    headers: ["host": "10.0.0.1:8080"].merging(headers) { $1 }))
        }
        #expect(get([:]).status == 403)
        #expect(get(["x-dj-token": "00"]).status == 403)
        let answer = get(["x-dj-token": site.djToken])
        guard case .bytes(let bytes) = answer.body else {
            Issue.record("no body")
            return
        }
        let list = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let rows = list["speakers"] as? [[String: Any]] ?? []
        #expect(answer.status == 200 && rows.count == 1, "\(list)")
        #expect(rows.first?["name"] as? String == "Kitchen" && rows.first?["volume"] as? Int == 30, "\(rows)")
    }

    /// A control from the DJ's page waits for what the DJ machine made of it and shows that: a
    /// refused `mute` comes back not ok, with the DJ's words (the fingerprints to choose from).
    @Test func theDJsPageGetsTheOutcomeOfItsControl() throws {
        let (site, hub, inbox) = site(timeout: 5)
        let refusal = "2 guests are called 'Sam'; say which with 'mute FINGERPRINT': aa (x); bb (y)."
        let seen = Mutex<[DJControl]>([])
        let dj = Thread {
            for _ in 0..<500 {
                for case .webDJControl(let control, let ticket) in inbox.drain() {
                    seen.withLock { $0.append(control) }
                    return hub.answer(ticket, .djOutcome(refusal, ok: false))
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        dj.start()
        let response = site.respond(
            to: WebRequest(
                method: "POST", path: "/api/dj", clientAddress: "10.0.0.9", body: Array("command=mute&arg=Sam".utf8),
                headers: [
                    "host": "10.0.0.1:8080", "origin": "http://10.0.0.1:8080", "x-dj-token": site.djToken,
                    "content-type": "application/x-www-form-urlencoded",
                ]))
        #expect(seen.withLock { $0 } == [.mute("Sam")])
        guard case .bytes(let bytes) = response.body else {
            Issue.record("no body")
            return
        }
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(answer["ok"] as? Bool == false && answer["message"] as? String == refusal, "\(answer)")
    }
}
