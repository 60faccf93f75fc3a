import Foundation
import Testing

/// Attacks a guest at the party could try, on the namespace LAN, each against the real binary.
@Suite(
    "Attacks on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct SecurityLANTests {
    /// Holds `count` TCP connections to host:port open, sending nothing, for `seconds`; prints how
    /// many it opened and how many the server closed.
    static let idleFlood = """
        import socket, sys, time
        host, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
        held = []
        for _ in range(count):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect((host, port))
            except BlockingIOError:
                pass
            held.append(s)
        print("opened", len(held), flush=True)
        time.sleep(seconds)
        """

    /// Fetches the whole URL and prints the status, the byte count and the seconds it took.
    static let fetch = """
        import sys, time, urllib.request
        start = time.monotonic()
        with urllib.request.urlopen(sys.argv[1], timeout=15) as response:
            body = response.read()
            print(response.status, len(body), round(time.monotonic() - start, 3))
        """

    @Test("Fresh keys from one machine are one vote: the second key is refused, unless the DJ allows more")
    func freshKeysDoNotStuffVotes() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Fair")
        // Five `vote up` runs on host 2, each with a fresh key (its own state directory).
        var exits: [Int32] = []
        for stuffer in 1...5 {
            let result = try lan.partyradio(host: 2, ["vote", "up", "--json"], role: "stuffer\(stuffer)")
            exits.append(result.exit)
            if stuffer > 1 { #expect(result.stderr.contains("another guest on this machine's address")) }
        }
        #expect(exits == [0, 1, 1, 1, 1])
        // Another machine still votes; the first key may change its vote.
        #expect(try lan.partyradio(host: 3, ["vote", "up"], role: "other").exit == 0)
        let changed = try lan.partyradio(host: 2, ["vote", "down", "--json"], role: "stuffer1")
        #expect((parseJSON(changed.stdout) as? [String: Any])?["down"] as? Int == 1)
        let counted = dj.events.filter { $0.name == "vote_counted" }
        #expect(counted.last?.int("up") == 1 && counted.last?.int("down") == 1)

        // A shared machine: the DJ counts three voters per address.
        dj.send("quit")
        _ = dj.wait(timeout: .seconds(5))
        let shared = try lan.startDJ(host: 1, name: "Shared", role: "dj2", extra: ["--voters-per-address", "3"])
        let results = try (1...4).map { try lan.partyradio(host: 2, ["vote", "up"], role: "shared\($0)").exit }
        #expect(results == [0, 0, 0, 1])
        #expect(shared.events.filter { $0.name == "vote_counted" }.last?.int("up") == 3)
    }

    @Test("500 idle connections from one guest do not stop a listener's media fetch")
    func idleConnectionsDoNotStarveMedia() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Server")
        let nowPlaying = try #require(dj.events.first { $0.name == "state" }?["now_playing"] as? [String: Any])
        let sourceText = try #require(nowPlaying["source"] as? String)
        let source = try #require(URL(string: sourceText))
        let host = try #require(source.host)
        let port = try #require(source.port)

        let attacker = try lan.spawn(host: 2, ["python3", "-c", Self.idleFlood, host, String(port), "500", "20"])
        defer { attacker.kill() }
        try attacker.waitForLine(containing: "opened 500", timeout: .seconds(10))
        Thread.sleep(forTimeInterval: 0.5)  // the server has seen them all

        let result = try lan.run(host: 3, ["python3", "-c", Self.fetch, source.absoluteString], timeout: .seconds(20))
        #expect(result.exit == 0, "the fetch failed under the flood: \(result.stderr)")
        let fields = result.stdout.split(separator: " ")
        #expect(fields.first == "200", "\(result.stdout)")
        #expect(fields.count == 3 && Int(fields[1]) ?? 0 > 1000, "\(result.stdout)")
        print("media fetch under 500 idle connections: \(result.stdout)")
    }
}
