import Foundation
import PartyRadioCore
import PartyRadioStorage
import Testing

@testable import PartyRadioCLI

/// `partyradio stats`: parsing, and runs against a stats store written here.
@Suite struct StatsCommandTests {
    @Test func statsTakesAllJsonAndTheCommonOptions() throws {
        #expect(try Command.parse(["stats"]) == .stats(Command.StatsOptions()))
        guard case .stats(let options) = try Command.parse(["stats", "--json", "--all", "--state-dir", "/tmp/s", "-v"])
        else {
            Issue.record("not stats")
            return
        }
        #expect(options.all && options.json)
        #expect(options.common == CommonOptions(stateDir: "/tmp/s", verbose: true))
        #expect(try Command.parse(["stats", "-a"]) == .stats(Command.StatsOptions(all: true)))
        #expect(throws: UsageError("Unknown option '--bogus'.", command: "stats")) {
            try Command.parse(["stats", "--bogus"])
        }
        #expect(throws: UsageError("Unexpected argument 'tonight'.", command: "stats")) {
            try Command.parse(["stats", "tonight"])
        }
        #expect(try Command.parse(["stats", "--help"]) == .help("stats"))
        #expect(HelpPages.page(for: "stats")?.rendered.contains("USAGE: partyradio stats") == true)
    }

    func record(
        _ id: String, _ title: String, up: UInt32, down: UInt32, _ ending: PlayRecord.Ending, by guest: String? = nil
    ) -> PlayRecord {
        PlayRecord(
            trackID: id, title: title, artist: "Band", startedAt: DJTime(ns: 1_700_000_000_000_000_000),
            listenersAtStart: 3, up: up, down: down, ending: ending, requestedBy: guest)
    }

    @Test func theLatestNightByDefaultEveryNightWithAll() async throws {
        let stateDir = makeTemporaryDirectory()
        do {
            let store = try DJStore(directory: URL(fileURLWithPath: stateDir))
            let first = try store.beginSession(station: "Old", at: DJTime(ns: 1_600_000_000_000_000_000))
            try store.record(record("o", "Old song", up: 1, down: 0, .played), session: first)
            let night = try store.beginSession(station: "Roof\u{1B}[2Jtop", at: DJTime(ns: 1_700_000_000_000_000_000))
            try store.record(record("g", "Good\u{07} song", up: 3, down: 1, .played, by: "Ann"), session: night)
            try store.record(record("b", "Bad song", up: 0, down: 2, .crowdSkip), session: night)
            try store.record(record("g", "Good\u{07} song", up: 1, down: 0, .djSkip, by: "Bo\u{1B}b"), session: night)
            try store.record(record("g", "Good\u{07} song", up: 0, down: 0, .played, by: "Ann"), session: night)
            try store.endSession(night, at: DJTime(ns: 1_700_000_600_000_000_000))
        }
        let text = await runCLI("stats", ["--state-dir", stateDir])
        #expect(text.code == 0)
        #expect(!text.out.contains("\u{1B}") && !text.out.contains("\u{07}"))
        // Whole escape sequences go (`ESC b` is one too, as a terminal reads it), in text and JSON.
        #expect(text.out.contains("Rooftop") && !text.out.contains("Old song"))
        #expect(text.out.contains("Best:  Good song — Band (80 % of 5 votes, 3 plays)"))
        #expect(text.out.contains("REQUESTED BY") && text.out.contains("3: Ann, Bo"))
        #expect(text.out.contains("Worst: Bad song — Band (0 % of 2 votes, 1 play)"))
        #expect(text.out.contains("1 crowd") && text.out.contains("1 dj"))

        let json = await runCLI("stats", ["--state-dir", stateDir, "--json"])
        let nights = json.json["nights"] as? [[String: Any]] ?? []
        #expect(nights.count == 1)
        let tracks = nights.first?["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.map { $0["track_id"] as? String } == ["g", "b"])
        #expect(tracks.first?["plays"] as? Int == 3 && tracks.first?["dj_skips"] as? Int == 1)
        #expect(tracks.first?["requests"] as? Int == 3)
        #expect(tracks.first?["requested_by"] as? [String] == ["Ann", "Bo"])
        #expect(tracks.last?["requests"] as? Int == 0 && tracks.last?["requested_by"] as? [String] == [])
        #expect(tracks.first?["approval_percent"] as? Double == 80)
        #expect((nights.first?["best"] as? [String: Any])?["track_id"] as? String == "g")
        #expect(nights.first?["started_at"] as? String == "2023-11-14T22:13:20Z")

        let all = await runCLI("stats", ["--state-dir", stateDir, "--json", "--all"])
        #expect(
            (all.json["nights"] as? [[String: Any]])?.map { $0["station"] as? String } == ["Old", "Rooftop"])
    }

    @Test func noStoreMeansNoNightsAndNoFile() async {
        let stateDir = makeTemporaryDirectory()
        let json = await runCLI("stats", ["--state-dir", stateDir, "--json"])
        #expect(json.code == 0 && json.out == #"{"nights":[]}"#)
        let text = await runCLI("stats", ["--state-dir", stateDir])
        #expect(text.code == 0 && text.out.contains("No stats yet"))
        #expect(!FileManager.default.fileExists(atPath: stateDir + "/stats.sqlite"))
    }

    @Test func aDamagedStoreIsAnError() async throws {
        let stateDir = makeTemporaryDirectory()
        try Data(repeating: 7, count: 2048).write(to: URL(fileURLWithPath: stateDir + "/stats.sqlite"))
        let run = await runCLI("stats", ["--state-dir", stateDir])
        #expect(run.code == 1 && run.err.hasPrefix("Error: ") && run.err.contains("damaged"))
    }
}
