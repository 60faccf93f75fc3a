import Foundation
import Testing

/// The DJ's web page API on a namespace LAN (issue 9), driven with curl from other hosts as a
/// browser would call it: guests' votes land in the same tally as the CLI's, one voter per
/// address whatever the cookies, live updates over server-sent events, writes only from the page
/// itself, size limits, and the DJ's controls only with its token. The page in a real browser is
/// WebBrowserLANTests.
@Suite(
    "The web page's API on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct WebLANTests {
    /// A curl on `host`: the status and the body. `jar` keeps the browser's cookies.
    func curl(_ lan: Testbed, host: Int, _ args: [String], jar: String? = nil) throws -> (status: Int, body: String) {
        let cookies = jar.map { ["-b", $0, "-c", $0] } ?? []
        let result = try lan.run(
            host: host, ["curl", "-sS", "-m", "15", "-w", "\n%{http_code}"] + cookies + args, timeout: .seconds(20))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    func object(_ text: String) -> [String: Any] { parseJSON(text) as? [String: Any] ?? [:] }

    /// POSTs a form as the page does (same origin).
    func post(
        _ lan: Testbed, host: Int, _ base: String, _ path: String, _ fields: [String], jar: String? = nil,
        headers: [String] = []
    ) throws -> (status: Int, body: String) {
        try curl(
            lan, host: host,
            ["-H", "Origin: \(base)"] + headers.flatMap { ["-H", $0] } + fields.flatMap { ["--data-urlencode", $0] }
                + [base + path], jar: jar)
    }

    @Test("Browser guests vote, request and chat as guests; the tally is shared with the CLI; live events; limits")
    func guestsOnTheWebAPI() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop")
        let (url, djURL) = try lan.pageLinks(dj)
        let base = String(url.dropLast())  // no trailing slash: the Origin a browser sends
        let token = String(try #require(djURL.split(separator: "=").last))
        #expect(url.hasPrefix("http://\(try lan.ip(host: 1)):"))

        // `stations` shows the page too.
        let stations = try lan.partyradio(host: 3, ["stations", "--json"], role: "observer")
        let listed = (parseJSON(stations.stdout) as? [[String: Any]])?.first
        #expect(listed?["web"] as? String == url)

        // The page and its state, with a guest cookie.
        let jar = lan.stateDir("browser") + "/cookies"
        let home = try curl(lan, host: 2, ["-i", url], jar: jar)
        #expect(home.status == 200 && home.body.contains("Content-Security-Policy: default-src 'none'"))
        let state = object(try curl(lan, host: 2, [base + "/api/state"], jar: jar).body)
        #expect(state["station"] as? String == "Rooftop")
        let now = try #require((state["now"] as? [String: Any])?["id"] as? String)

        // A live stream from a second browser on host 2 sees what follows.
        let stream = try lan.spawn(host: 2, ["curl", "-sS", "-N", base + "/api/events"])
        defer { stream.kill() }
        try stream.waitForLine(containing: "event: state", timeout: .seconds(5))

        // The browser votes up; the CLI on host 3 votes down: one tally.
        let vote = object(
            try post(lan, host: 2, base, "/api/vote", ["track=\(now)", "choice=up"], jar: jar).body)
        #expect(vote["ok"] as? Bool == true && vote["status"] as? String == "counted")
        // Host 2's page has been open a moment (the stream told the DJ): the vote weighs toward crowd
        // skip in a little under the default 20 s, and the answer says so.
        let weighsIn = vote["weighs_in_ms"] as? Int ?? 0
        #expect(weighsIn > 0 && weighsIn < 20_000, "\(vote)")
        #expect((vote["message"] as? String ?? "").contains("counts toward a crowd skip once you have listened"))
        let cli = try lan.partyradio(host: 3, ["vote", "down", "--station", "Rooftop"], role: "cli-voter")
        #expect(cli.exit == 0, "\(cli.stderr)")
        try dj.waitForEvent("both votes") { $0.name == "vote_counted" && $0.int("up") == 1 && $0.int("down") == 1 }
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline && !stream.text(.stdout).contains("\"tally\":{\"up\":1,\"down\":1}") {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(
            stream.text(.stdout).contains("\"tally\":{\"up\":1,\"down\":1}"), "the stream did not see the CLI's vote")

        // A fresh cookie on the same address is the same guest as far as votes go.
        let other = try post(lan, host: 2, base, "/api/vote", ["track=\(now)", "choice=down"])
        #expect(object(other.body)["status"] as? String == "address_limit")

        // Request by title words and chat; both visible in the state, the chat line unchanged.
        let request = object(try post(lan, host: 2, base, "/api/request", ["words=blue hour"], jar: jar).body)
        #expect(request["status"] as? String == "queued", "\(request)")
        _ = try post(lan, host: 2, base, "/api/name", ["name=Web Ann"], jar: jar)
        let chat = object(
            try post(lan, host: 2, base, "/api/chat", ["text=<img src=x onerror=alert(1)>"], jar: jar).body)
        #expect(chat["ok"] as? Bool == true)
        let after = object(try curl(lan, host: 2, [base + "/api/state"], jar: jar).body)
        let lines = after["chat"] as? [[String: Any]] ?? []
        #expect(lines.last?["text"] as? String == "<img src=x onerror=alert(1)>")
        #expect(lines.last?["name"] as? String == "Web Ann")
        let queue = try lan.partyradio(host: 3, ["queue", "--json", "--station", "Rooftop"], role: "cli-voter")
        #expect(queue.stdout.contains("Blue Hour"))

        // Writes only from the page: no Origin, another origin, not a form, too large.
        #expect(try curl(lan, host: 2, ["--data", "text=x", base + "/api/chat"]).status == 403)
        #expect(
            try curl(lan, host: 2, ["-H", "Origin: http://evil.example", "--data", "text=x", base + "/api/chat"]).status
                == 403)
        #expect(
            try curl(
                lan, host: 2,
                ["-H", "Origin: \(base)", "-H", "Content-Type: text/plain", "--data", "text=x", base + "/api/chat"]
            ).status
                == 415)
        let big = String(repeating: "a", count: 5000)
        #expect(try post(lan, host: 2, base, "/api/chat", ["text=\(big)"]).status == 413)
        #expect(try curl(lan, host: 2, [base + "/nothing-here"]).status == 404)

        // The DJ's controls: 403 without the token, done with it.
        #expect(try post(lan, host: 2, base, "/api/dj", ["command=skip"]).status == 403)
        #expect(try post(lan, host: 2, base, "/api/dj", ["command=skip"], headers: ["X-DJ-Token: 0123"]).status == 403)
        #expect(try curl(lan, host: 2, [base + "/qr.svg?dj=1"]).status == 403)
        let mark = dj.events.count
        let skip = try post(lan, host: 2, base, "/api/dj", ["command=skip"], headers: ["X-DJ-Token: \(token)"])
        // The answer waits for the DJ's outcome and says it (docs/WEB.md, POST /api/dj).
        #expect(skip.status == 200, "\(skip.body)")
        let outcome = object(skip.body)
        #expect(outcome["ok"] as? Bool == true && !(outcome["message"] as? String ?? "").isEmpty, "\(skip.body)")
        try dj.waitForEvent(after: mark, "skipped by the DJ") { $0.name == "track_skipped" }
        let qr = try curl(lan, host: 2, [base + "/qr.svg"])
        #expect(qr.status == 200 && qr.body.contains("<svg") && qr.body.contains("<path"))
    }

    /// DNS rebinding: a page on the attacker's name, once that name resolves to the DJ, is
    /// same-origin with itself, so its `Origin` matches its `Host`; the `Host` is the attacker's
    /// name, which the DJ does not answer. curl's `--resolve` stands in for the rebinding DNS answer.
    @Test("A page under another name (DNS rebinding) gets 421; the DJ's own addresses and mDNS name are answered")
    func foreignHostsAreMisdirected() throws {
        let lan = try Testbed(hosts: 2, ip: .dual)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop")
        let page = try dj.waitForEvent("web_page") { $0.name == "web_page" }
        let base = String(try #require(page.string("url")).dropLast())
        let port = String(try #require(base.split(separator: ":").last))
        let ip = try lan.ip(host: 1)
        let evil = "rebind.attacker.example"
        let resolve = ["--resolve", "\(evil):\(port):\(ip)"]
        let foreign = "http://\(evil):\(port)"
        #expect(try curl(lan, host: 2, resolve + ["\(foreign)/"]).status == 421)
        #expect(try curl(lan, host: 2, resolve + ["\(foreign)/api/state"]).status == 421)
        let vote = try curl(
            lan, host: 2, resolve + ["-H", "Origin: \(foreign)", "--data", "choice=up", "\(foreign)/api/vote"])
        #expect(vote.status == 421 && !vote.body.contains("Rooftop"))
        let chat = try curl(
            lan, host: 2, resolve + ["-H", "Origin: \(foreign)", "--data", "text=hi", "\(foreign)/api/chat"])
        #expect(chat.status == 421)
        // The DJ's own: the page's address, its mDNS name, its IPv6 address in brackets.
        #expect(try curl(lan, host: 2, [base + "/api/state"]).status == 200)
        let name = try lan.hostName(host: 1) + ".local"
        #expect(
            try curl(lan, host: 2, ["--resolve", "\(name):\(port):\(ip)", "http://\(name):\(port)/"]).status == 200)
        let v6 = try lan.ipv6(host: 1)
        #expect(try curl(lan, host: 2, ["-H", "Host: [\(v6)]:\(port)", base + "/api/state"]).status == 200)
        // Nothing the foreign page sent reached the station.
        #expect(!dj.events.contains { $0.name == "vote_counted" || $0.name == "chat" })
    }

    @Test("Catalog search and requests through the DJ, and catalog artwork served by the DJ itself")
    func catalogThroughTheDJ() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/catalog_fixture_server.py").path
        let fixture = try lan.spawn(host: 1, ["python3", script, "0", "--local-artwork"], stdin: true)
        let port = try fixture.waitForLine(containing: "PORT ", timeout: .seconds(10)).split(separator: " ").last ?? ""
        defer { withExtendedLifetime(fixture) {} }
        let dj = try lan.startDJ(
            host: 1, name: "Covers", extra: ["--add", "617154366"],
            env: ["PARTYRADIO_ITUNES_URL": "http://127.0.0.1:\(port)"])
        let url = try #require(try dj.waitForEvent("web_page") { $0.name == "web_page" }.string("url"))
        let base = String(url.dropLast())

        let state = object(try curl(lan, host: 2, [base + "/api/state"]).body)
        let now = try #require(state["now"] as? [String: Any])
        #expect(now["id"] as? String == "617154366")
        let artwork = try #require(now["artwork"] as? String)
        #expect(artwork == "/art/617154366")
        // The artwork comes from the DJ (fetched from the catalog's image server by the DJ).
        let image = try lan.run(
            host: 2,
            ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{content_type} %{size_download}", base + artwork])
        #expect(image.stdout.hasPrefix("200 image/jpeg"), "\(image.stdout) \(image.stderr)")
        #expect(try curl(lan, host: 2, [base + "/art/999"]).status == 404)

        // Search through the DJ: the catalog's results, marked as such.
        let search = object(try curl(lan, host: 2, [base + "/api/search?q=daft%20punk"]).body)
        let results = search["results"] as? [[String: Any]] ?? []
        #expect(search["catalog"] as? String == "ok")
        let pick = try #require(results.first { $0["from"] as? String == "catalog" })
        let id = try #require(pick["id"] as? String)
        let request = object(try post(lan, host: 2, base, "/api/request", ["id=\(id)"]).body)
        #expect(request["status"] as? String == "queued", "\(request)")
        let after = object(try curl(lan, host: 2, [base + "/api/state"]).body)
        let entries = (after["queue"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        #expect(entries.contains { $0["track_id"] as? String == id && ($0["queue_id"] as? Int ?? 0) > 0 })
    }

    @Test("A page that reconnects is let back in: a stream whose client hung up frees its slot at once")
    func hungUpStreamsFreeTheirSlots() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop")
        let url = try #require(try dj.waitForEvent("web_page") { $0.name == "web_page" }.string("url"))
        // One address may hold 8 connections: fill them, hang up, and fill them again at once.
        for round in 0..<2 {
            let streams = try (0..<8).map { _ in try lan.spawn(host: 2, ["curl", "-sS", "-N", url + "api/events"]) }
            for stream in streams { try stream.waitForLine(containing: "event: state", timeout: .seconds(5)) }
            for stream in streams {
                stream.kill(signal: SIGKILL)
                _ = stream.wait(timeout: .seconds(5))
            }
            if round == 0 { Thread.sleep(forTimeInterval: 1) }  // 4 looks at the socket, well before the 5 s ping
        }
    }
}
