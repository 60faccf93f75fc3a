import Foundation
import Testing

/// The DJ queues catalog tracks (issue 4, "Into the queue"). Apple's API is stood in for by the
/// fixture server, run on the DJ's own host (its loopback, inside the test namespace), so no
/// test touches the internet.
@Suite(
    "Catalog tracks on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct CatalogLANTests {
    /// Starts the fixture server on `host` and returns it with its base URL.
    func fixtureServer(_ lan: Testbed, host: Int) throws -> (TestbedProcess, String) {
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/catalog_fixture_server.py").path
        let server = try lan.spawn(host: host, ["python3", script, "0"], stdin: true)  // exits when stdin closes
        let line = try server.waitForLine(containing: "PORT ", timeout: .seconds(10))
        return (server, "http://127.0.0.1:\(line.split(separator: " ").last ?? "")")
    }

    @Test("dj --search/--pick and --add queue previews; search and add work on the running DJ")
    func catalogQueue() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (server, url) = try fixtureServer(lan, host: 1)
        defer { withExtendedLifetime(server) {} }
        let dj = try lan.startDJ(
            host: 1, name: "Catalog", extra: ["--search", "daft punk", "--pick", "2", "--add", "617154366"],
            env: ["PARTYRADIO_ITUNES_URL": url])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        #expect(started.int("queue_length") == 2)

        // A listener on another host sees the catalog track, its source the preview URL.
        let listener = try lan.spawn(
            host: 2,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        let tuned = try listener.waitForEvent("tuned in") { $0.name == "tuned_in" }
        let playing = (tuned["station"] as? [String: Any])?["now_playing"] as? [String: Any]
        #expect(playing?["title"] as? String == "One More Time")
        #expect(playing?["track_id"] as? String == "697195462")
        #expect((playing?["source"] as? String)?.hasPrefix("https://audio-ssl.itunes.apple.com/") == true)
        #expect(playing?["duration_ms"] as? Int == 30_000)

        // On the running DJ: search lists numbered results with IDs, add queues by ID.
        dj.send("search daft punk")
        let results = try dj.waitForEvent("results") { $0.name == "search_results" }
        let ids = (results["tracks"] as? [[String: Any]])?.compactMap { $0["track_id"] as? String } ?? []
        #expect(ids.contains("697195462") && ids.contains("617154366"))
        #expect(!ids.contains("1440806061"), "a result without a preview cannot be queued")
        dj.send("add 697195462")
        let queued = try dj.waitForEvent("queued") { $0.name == "queued" }
        #expect(queued.int("queue_length") == 3)
        try listener.waitForEvent("queue reaches the listener") { $0.int("queue_length") == 3 }
        dj.send("add 999")
        let warning = try dj.waitForEvent("warning") { $0.name == "warning" }
        #expect(warning.string("message")?.contains("999") == true)
        dj.send("next")
        let next = try listener.waitForEvent("next track") {
            $0.string("change") == "track" && $0.int("queue_index") == 1
        }
        #expect(next.string("track_id") == "617154366")
        listener.kill()
    }

    @Test("A catalog that fails stops the DJ with a clear error before it goes on air")
    func catalogFailures() throws {
        let lan = try Testbed(hosts: 1)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (server, url) = try fixtureServer(lan, host: 1)
        defer { withExtendedLifetime(server) {} }
        let env = ["PARTYRADIO_ITUNES_URL": url]
        func dj(_ args: [String]) throws -> (exit: Int32, stdout: String, stderr: String) {
            try lan.run(
                host: 1,
                [Testbed.partyradioBinary, "dj", "--name", "X", "--no-audio", "--state-dir", lan.stateDir("dj")] + args,
                env: env)
        }
        let empty = try dj(["--search", "empty"])
        #expect(empty.exit == 1 && empty.stderr.contains("no playable tracks for 'empty'"))
        let pick = try dj(["--search", "daft punk", "--pick", "9"])
        #expect(pick.exit == 2 && pick.stderr.contains("pick one of 1–3"))
        let missing = try dj(["--add", "123"])
        #expect(missing.exit == 1 && missing.stderr.contains("no playable track with ID 123"))
        let limited = try dj(["--search", "ratelimited"])
        #expect(limited.exit == 1 && limited.stderr.hasPrefix("Error: The catalog could not be reached"))
        let usage = try dj(["--pick", "1"])
        #expect(usage.exit == 2 && usage.stderr.contains("--search"))
    }
}
