import Foundation
import Testing

/// A DJ killed with `kill -9` and started again with the same state directory is the same
/// station where it was, and a listener that ran throughout carries on with it.
@Suite(
    "Persistence on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct PersistenceLANTests {
    /// Rows of `sql` on the SQLite file at `path` (read with the sqlite3 shell, which WAL lets
    /// read while a DJ writes), one string per row, columns joined by '|'.
    func query(_ path: String, _ sql: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(
        "kill -9: the DJ comes back as the same station, on the same track within 2 s, with its queue, votes and chat; the listener follows"
    )
    func killedDJComesBack() throws {
        let lan = try Testbed(hosts: 4)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let database = lan.stateDir("dj") + "/dj.sqlite"
        let dj = try lan.startDJ(host: 1, name: "Rooftop")
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let listener = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir",
                lan.stateDir("listener"),
            ])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        try dj.waitForEvent("listener joined") { $0.name == "listener_joined" }

        // The second track, a shuffled queue, two votes and a chat line.
        dj.send("next")
        try dj.waitForEvent("next") { $0.string("change") == "track" && $0.int("queue_index") == 1 }
        dj.send("shuffle")
        dj.send("seek 2")
        try dj.waitForEvent("seek") { $0.string("change") == "seek" }
        #expect(try lan.partyradio(host: 3, ["vote", "up"], role: "ann").exit == 0)
        #expect(try lan.partyradio(host: 4, ["vote", "down"], role: "bob").exit == 0)
        let said = try lan.partyradio(host: 3, ["chat", "--as", "Ann", "still", "here?"], role: "ann")
        #expect(said.exit == 0, "\(said.stderr)")
        let asked = try lan.partyradio(host: 4, ["request", "last", "call", "--as", "Bob"], role: "bob")
        #expect(asked.exit == 0, "\(asked.stderr)")
        let queueBefore = try query(database, "SELECT track_id FROM station_queue ORDER BY position")
        #expect(queueBefore.count >= 3)

        // The DJ dies without a word.
        Thread.sleep(forTimeInterval: 1.2)
        let last = try #require(dj.events.last { $0.name == "progress" || $0.name == "state" })
        dj.kill(signal: SIGKILL)
        _ = dj.wait(timeout: .seconds(5))
        #expect(try query(database, "PRAGMA integrity_check") == ["ok"])
        #expect(
            try query(database, "SELECT json FROM station_books WHERE name = 'chat'").first?.contains("still here?")
                == true)

        // The listener waits for it and keeps running.
        try listener.waitForEvent(timeout: .seconds(5), "waiting") { $0.name == "station_silent" }
        Thread.sleep(forTimeInterval: 1)
        #expect(listener.isRunning)
        let mark = listener.events.count

        // Started again with the same state directory: the same station, where it was.
        let again = try lan.startDJ(host: 1, name: "Rooftop")
        let restarted = try again.waitForEvent("started") { $0.name == "station_started" }
        #expect(restarted.string("id") == started.string("id") && restarted.string("station") == "Rooftop")
        let state = try again.waitForEvent("first state") { $0.name == "state" }
        #expect(state.string("track_id") == last.string("track_id"))
        #expect(state.int("queue_index") == last.int("queue_index"))
        // Where the station would be had it played on (listeners did), within 2 s.
        let expected = (last.int("position_ms") ?? 0) + Int((state.timeNs - last.timeNs) / 1_000_000)
        let position = state.int("position_ms") ?? -1
        #expect(abs(position - expected) < 2_000, "at \(position) ms, expected about \(expected) ms")
        #expect(state.int("up") == 1 && state.int("down") == 1)
        #expect(state.int("queue_length") == last.int("queue_length"))

        // The listener is back with it, on the same track.
        try listener.waitForEvent(after: mark, timeout: .seconds(10), "back") { $0.name == "station_back" }
        let heard = try listener.waitForEvent(after: mark, timeout: .seconds(5), "state after the restart") {
            ($0.name == "state" || $0.name == "progress") && $0.timeNs > state.timeNs
        }
        #expect(heard.string("track_id") == last.string("track_id"))
        try again.waitForEvent(timeout: .seconds(10), "listener back") { $0.name == "listener_joined" }
        #expect(listener.isRunning)

        // The same queue, and a vote already counted is not counted again.
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try query(database, "SELECT track_id FROM station_queue ORDER BY position") == queueBefore)
        let repeated = try lan.partyradio(host: 3, ["vote", "up", "--json"], role: "ann")
        let tally = try #require(parseJSON(repeated.stdout) as? [String: Any])
        #expect(tally["up"] as? Int == 1 && tally["down"] as? Int == 1)
        // Bob's request still waits, with his name.
        let waiting = try lan.partyradio(host: 3, ["queue", "--json"], role: "ann")
        let upNext = try #require(parseJSON(waiting.stdout) as? [String: Any], "\(waiting.stderr)")
        #expect(upNext["requests_waiting"] as? Int == 1)
        let first = (upNext["up_next"] as? [[String: Any]])?.first
        #expect(first?["title"] as? String == "Last Call Arpeggio" && first?["requested_by"] as? String == "Bob")

        // One night: the killed run's night carries on.
        again.send("quit")
        #expect(again.wait(timeout: .seconds(5)) == 0)
        // A clean quit folds the write-ahead log in: dj.sqlite alone is the whole database.
        let log = (try? FileManager.default.attributesOfItem(atPath: database + "-wal"))?[.size] as? Int ?? 0
        #expect(log == 0, "the DJ quit leaving \(log) bytes in dj.sqlite-wal")
        #expect(try query(database, "SELECT count(*) FROM sessions") == ["1"])
        listener.kill(signal: SIGINT)
        _ = listener.wait(timeout: .seconds(5))
    }

    @Test(
        "A few kill -9 at random moments while guests vote and chat: the file stays whole, nothing acknowledged is lost"
    )
    func crashLoop() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let database = lan.stateDir("dj") + "/dj.sqlite"
        var random = SystemRandomNumberGenerator()
        var said: [String] = []
        for round in 0..<4 {
            let dj = try lan.startDJ(host: 1, name: "Crashy")
            // A chat line from a guest, acknowledged by the DJ, then the kill at a random moment.
            let text = "line \(round)"
            let chat = try lan.partyradio(host: 2, ["chat", "--as", "Ann", text], role: "ann")
            if chat.exit == 0 { said.append(text) }
            #expect(try lan.partyradio(host: 3, ["vote", round % 2 == 0 ? "up" : "down"], role: "bob").exit == 0)
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.8, using: &random))
            dj.kill(signal: SIGKILL)
            _ = dj.wait(timeout: .seconds(5))
            #expect(try query(database, "PRAGMA integrity_check") == ["ok"])
            let chatBook = try query(database, "SELECT json FROM station_books WHERE name = 'chat'").joined()
            for line in said { #expect(chatBook.contains(line), "'\(line)' was acknowledged and is lost") }
        }
        #expect(said.count == 4)
    }
}
