import Foundation
import PartyRadioCore
import PartyRadioSQLite
import Testing

@testable import PartyRadioStorage

/// The saved station in the DJ's database, on real SQLite files in a fresh directory each.
@Suite struct DJStoreStationTests {
    let directory: URL = {
        let url = storageScratchRoot.appendingPathComponent("partyradio-station-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    var path: String { DJStore.path(in: directory) }

    static func key(_ seed: UInt8) -> PublicKey { PublicKey(bytes: [UInt8](repeating: seed, count: 32))! }

    static func track(_ id: String) -> Track {
        Track(
            id: id, title: "Title \(id) 'quoted' ✓", artist: "Artist", album: "Album", durationMs: 180_000,
            source: "http://10.0.0.1:8080/\(id)")
    }

    /// A station with something in every section.
    static func station() -> SavedStation {
        var votes = VoteBook(trackID: "b")
        _ = votes.apply(voter: key(1), trackID: "b", choice: .up)
        _ = votes.apply(voter: key(2), trackID: "b", choice: .down)
        var requests = RequestBook(mode: .approve, maxPerGuest: 2)
        _ = requests.admit(RequestSend(requestID: 5, name: "Ann", wanted: .catalogID("r1")), from: key(1), nowNs: 10)
        _ = requests.resolved(requestID: 5, from: key(1), name: "Ann", track: track("r1"))
        _ = requests.vote(RequestVote(queueID: 1, choice: .up), from: key(2), sequence: 3)
        var chat = ChatBook()
        _ = chat.submit(ChatSend(messageID: 1, name: "Ann", text: "hi"), from: key(1), now: DJTime(ns: 5))
        _ = chat.submit(ChatSend(messageID: 2, name: "Ann", text: "again"), from: key(1), now: DJTime(ns: 6))
        chat.mute(fingerprint: key(3).fingerprint)
        return SavedStation(
            queue: ["a", "b", "c"].map(track), index: 1,
            interlude: StationEngine.Interlude(queueID: 7, track: track("x"), requesterName: "Bob"),
            positionNs: 42_000_000_000, paused: true, repeatMode: .one, volume: 35, votes: votes, requests: requests,
            chat: chat)
    }

    /// ``station()`` with voters `seeds` besides, each up on track b from `10.0.0.<seed>`.
    static func station(voters seeds: Range<UInt8>) -> SavedStation {
        var station = station()
        for seed in seeds {
            _ = station.votes.apply(voter: key(seed), trackID: "b", choice: .up, from: "10.0.0.\(seed)", sequence: 1)
        }
        return station
    }

    /// A store with `station` saved in it, and a second connection to its file, to change and
    /// read it behind the store's back.
    func storeWith(_ station: SavedStation) throws -> (store: DJStore, side: SQLiteConnection) {
        let store = try DJStore(directory: directory)
        try store.saveStation(station, at: LocalTime(ns: 1))
        return (store, try SQLiteConnection(path: path))
    }

    @Test func everySectionSurvivesAReopen() throws {
        let saved = Self.station()
        do {
            let store = try DJStore(directory: directory)
            #expect(try store.loadStation() == nil)
            try store.saveStation(saved, at: LocalTime(ns: 123))
        }
        let store = try DJStore(directory: directory)
        let loaded = try store.loadStation()
        #expect(loaded == DJStore.Saved(station: saved, savedAt: LocalTime(ns: 123), stopped: false))
        try store.markStopped()
        #expect(try DJStore(directory: directory).loadStation()?.stopped == true)
        // A save after a stop is a running station again.
        try store.saveStation(saved, at: LocalTime(ns: 124))
        #expect(try DJStore(directory: directory).loadStation()?.stopped == false)
    }

    /// A request vote's sequence is saved with the request: after a restart (a reopen) a replay
    /// of that vote changes nothing, as a replayed track vote does not.
    @Test func aRequestVotesSequenceSurvivesAReopen() throws {
        var saved = Self.station()
        #expect(
            saved.requests.vote(
                RequestVote(queueID: 1, choice: .down), from: Self.key(4), address: "10.0.0.4", sequence: 90
            ).status
                == .counted)
        #expect(
            saved.requests.vote(
                RequestVote(queueID: 1, choice: .clear), from: Self.key(4), address: "10.0.0.4", sequence: 91
            ).status
                == .counted)
        try DJStore(directory: directory).saveStation(saved, at: LocalTime(ns: 1))
        var loaded = try #require(try DJStore(directory: directory).loadStation()).station
        #expect(loaded.requests.waiting.first?.tally == Tally(up: 1))
        // Key 4's down vote replayed: still cleared; key 2's up (sequence 3) replayed as a clear: still up.
        _ = loaded.requests.vote(
            RequestVote(queueID: 1, choice: .down), from: Self.key(4), address: "10.0.0.4", sequence: 90)
        _ = loaded.requests.vote(RequestVote(queueID: 1, choice: .clear), from: Self.key(2), sequence: 3)
        #expect(loaded.requests.waiting.first?.tally == Tally(up: 1))
        // A newer vote counts.
        _ = loaded.requests.vote(
            RequestVote(queueID: 1, choice: .down), from: Self.key(4), address: "10.0.0.4", sequence: 92)
        #expect(loaded.requests.waiting.first?.tally == Tally(up: 1, down: 1))
    }

    /// A requests book saved before the sequences were (no `sequences` in its requests) loads.
    @Test func anOlderFilesRequestsLoadWithoutSequences() throws {
        let (_, side) = try storeWith(Self.station())
        try side.query(
            "UPDATE station_books SET json = json_remove(json, '$.waiting[0].sequences') WHERE name = 'requests'")
        let json = try side.query("SELECT json FROM station_books WHERE name = 'requests'").first?.first?.text
        #expect(json?.contains("waiting") == true && json?.contains("sequences") == false)
        let loaded = try #require(try DJStore(directory: directory).loadStation()).station
        #expect(loaded.requests.waiting.first?.sequences == nil)
        #expect(loaded.requests.waiting.first?.tally == Tally(up: 1))
    }

    @Test func aSaveWritesOnlyTheSectionsThatChanged() throws {
        var saved = Self.station()
        let (store, side) = try storeWith(saved)
        // Mark the stored rows behind the store's back: whatever is rewritten loses the mark.
        func mark() throws {
            try side.query("UPDATE station_queue SET album = 'marked'")
            try side.query("UPDATE station_books SET json = json || ' '")
        }
        func marks() throws -> (queue: Int, books: [String]) {
            let queue = try side.query("SELECT count(*) FROM station_queue WHERE album = 'marked'")
            let books = try side.query("SELECT name FROM station_books WHERE json LIKE '% ' ORDER BY name")
            return (Int(queue.first?.first?.integer ?? 0), books.compactMap { $0.first?.text })
        }
        try mark()
        saved.positionNs += 1_000_000_000
        try store.saveStation(saved, at: LocalTime(ns: 2))
        #expect(try marks() == (3, ["chat", "requests", "votes_track"]))  // only the position row moved
        saved.queue.append(Self.track("d"))
        try store.saveStation(saved, at: LocalTime(ns: 3))
        #expect(try marks() == (3, ["chat", "requests", "votes_track"]))  // one row added at the end
        _ = saved.chat.submit(ChatSend(messageID: 3, name: "Ann", text: "more"), from: Self.key(1), now: DJTime(ns: 7))
        try store.saveStation(saved, at: LocalTime(ns: 4))
        #expect(try marks() == (3, ["requests", "votes_track"]))
        saved.queue.swapAt(0, 2)
        try store.saveStation(saved, at: LocalTime(ns: 5))
        #expect(try marks().queue == 0)  // reordered: rewritten
        let loaded = try DJStore(directory: directory).loadStation()?.station
        #expect(loaded?.queue.map(\.id) == ["c", "b", "a", "d"])
        #expect(loaded?.chat.lines.map(\.text) == ["hi", "again", "more"])
    }

    /// The votes are a row per voter: a vote rewrites its voter's row alone, a new track all of
    /// them, and a cleared vote keeps its row (its sequence still stops replays).
    @Test func aVoteRewritesOnlyItsVotersRow() throws {
        var saved = Self.station(voters: 10..<40)
        let (store, side) = try storeWith(saved)
        func marked() throws -> Int {
            Int(
                try side.query("SELECT count(*) FROM station_voters WHERE addresses LIKE '% '").first?.first?.integer
                    ?? 0)
        }
        try side.query("UPDATE station_voters SET addresses = addresses || ' '")
        #expect(try marked() == 32)
        _ = saved.votes.apply(voter: Self.key(11), trackID: "b", choice: .down, from: "10.0.0.11", sequence: 2)
        _ = saved.votes.apply(voter: Self.key(12), trackID: "b", choice: .clear, from: "10.0.0.12", sequence: 2)
        _ = saved.votes.apply(voter: Self.key(50), trackID: "b", choice: .up, from: "10.0.0.50", sequence: 1)
        try store.saveStation(saved, at: LocalTime(ns: 2))
        #expect(try marked() == 30, "two voters rewritten, one added, the other 30 untouched")
        let loaded = try #require(try DJStore(directory: directory).loadStation()?.station.votes)
        #expect(loaded.tally == saved.votes.tally && loaded.voterRows == saved.votes.voterRows)
        #expect(loaded.choice(of: Self.key(11)) == .down && loaded.choice(of: Self.key(12)) == .clear)
        // An old vote replayed after the restart changes nothing: its voter's sequence was kept.
        var replayed = loaded
        #expect(
            replayed.apply(voter: Self.key(12), trackID: "b", choice: .up, from: "10.0.0.12", sequence: 1)
                == .superseded)
        #expect(replayed.choice(of: Self.key(12)) == .clear)
        saved.votes.reset(trackID: "c")
        _ = saved.votes.apply(voter: Self.key(1), trackID: "c", choice: .up, from: "10.0.0.1", sequence: 3)
        try store.saveStation(saved, at: LocalTime(ns: 3))
        #expect(try side.query("SELECT count(*) FROM station_voters").first?.first?.integer == 1)
        #expect(try DJStore(directory: directory).loadStation()?.station.votes == saved.votes)
    }

    /// A file from before the votes had rows keeps them in one "votes" book: it loads, and its
    /// next save moves the votes into rows.
    @Test func anOlderFilesVoteBookMovesIntoRows() throws {
        let saved = Self.station()
        do {
            let store = try DJStore(directory: directory)
            try store.saveStation(saved, at: LocalTime(ns: 1))
        }
        let side = try SQLiteConnection(path: path)
        let book = String(decoding: try JSONEncoder().encode(saved.votes), as: UTF8.self)
        try side.query("DELETE FROM station_voters")
        try side.query("DELETE FROM station_books WHERE name = 'votes_track'")
        try side.query("INSERT INTO station_books (name, json) VALUES ('votes', ?)", [.text(book)])
        let store = try DJStore(directory: directory)
        #expect(try store.loadStation()?.station == saved)
        try store.saveStation(saved, at: LocalTime(ns: 2))
        #expect(try side.query("SELECT count(*) FROM station_books WHERE name = 'votes'").first?.first?.integer == 0)
        #expect(try side.query("SELECT count(*) FROM station_voters").first?.first?.integer == 2)
        #expect(try DJStore(directory: directory).loadStation()?.station == saved)
    }

    @Test func aFailedSaveLeavesTheLastOneWhole() throws {
        let first = Self.station()
        let (store, side) = try storeWith(first)
        // Another process holds the write lock longer than the busy timeout allows.
        try side.query("BEGIN IMMEDIATE")
        var second = first
        second.queue.removeFirst()
        second.positionNs = 1
        #expect(throws: DJStoreError.self) { try store.saveStation(second, at: LocalTime(ns: 2)) }
        try side.query("ROLLBACK")
        #expect(try DJStore(directory: directory).loadStation()?.station == first)
        // The next save writes every section that differs from the file, not from the failed attempt.
        try store.saveStation(second, at: LocalTime(ns: 3))
        #expect(try DJStore(directory: directory).loadStation()?.station == second)
    }

    /// The store remembers the voters' rows it wrote, to write only the changed ones next: a save
    /// that rolled back (here after its votes were written, at the chat) must not count as
    /// written, or the voters it changed would never reach the file.
    @Test func aFailedSaveOfVotesLeavesWhatTheNextSaveWritesWhole() throws {
        let first = Self.station(voters: 10..<20)
        let (store, side) = try storeWith(first)
        func failingAtTheChat(_ station: SavedStation, at ns: Int64) throws {
            try side.query(
                """
                CREATE TRIGGER fail BEFORE INSERT ON station_books WHEN NEW.name = 'chat'
                BEGIN SELECT RAISE(ABORT, 'injected'); END
                """)
            #expect(throws: DJStoreError.self) { try store.saveStation(station, at: LocalTime(ns: ns)) }
            try side.query("DROP TRIGGER fail")
        }
        var second = first
        _ = second.votes.apply(voter: Self.key(11), trackID: "b", choice: .down, from: "10.0.0.11", sequence: 2)
        _ = second.votes.apply(voter: Self.key(12), trackID: "b", choice: .clear, from: "10.0.0.12", sequence: 2)
        _ = second.votes.apply(voter: Self.key(30), trackID: "b", choice: .up, from: "10.0.0.30", sequence: 1)
        _ = second.chat.submit(ChatSend(messageID: 3, name: "Ann", text: "more"), from: Self.key(1), now: DJTime(ns: 7))
        try failingAtTheChat(second, at: 2)
        #expect(try DJStore(directory: directory).loadStation()?.station == first)
        // The same station again: every voter the failed save changed is written now.
        try store.saveStation(second, at: LocalTime(ns: 3))
        #expect(try DJStore(directory: directory).loadStation()?.station == second)
        // A failed save on a new track, then more votes on the old one: the file holds the old
        // track's voters, each as it is now.
        var third = second
        third.votes.reset(trackID: "c")
        _ = third.votes.apply(voter: Self.key(1), trackID: "c", choice: .down, from: "10.0.0.1", sequence: 3)
        _ = third.chat.submit(ChatSend(messageID: 4, name: "Ann", text: "new"), from: Self.key(1), now: DJTime(ns: 8))
        try failingAtTheChat(third, at: 4)
        var fourth = second
        _ = fourth.votes.apply(voter: Self.key(13), trackID: "b", choice: .down, from: "10.0.0.13", sequence: 2)
        try store.saveStation(fourth, at: LocalTime(ns: 5))
        let loaded = try #require(try DJStore(directory: directory).loadStation()?.station)
        #expect(loaded == fourth && loaded.votes.voterRows == fourth.votes.voterRows)
    }

    /// A voter's addresses are written as a JSON array by hand: whatever a string holds, it reads
    /// back as it was.
    @Test func addressesAreJSONWhateverTheyHold() throws {
        let cases: [[String]] = [
            [], ["10.0.0.1"], ["fe80::1%eth0", "10.0.0.2"], ["a\"b\\c", "line\nbreak\ttab\r", "\u{1}\u{1F}", "ü ✓ 🎶"],
        ]
        for strings in cases {
            let text = DJStore.jsonArray(strings)
            #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == strings, "\(text)")
        }
        #expect(DJStore.jsonArray(["10.0.0.1", "fd00::2"]) == #"["10.0.0.1","fd00::2"]"#)
    }

    @Test func clearingForgetsTheStationAndKeepsTheStats() throws {
        let store = try DJStore(directory: directory)
        let night = try store.beginSession(station: "Rooftop", at: DJTime(ns: 1))
        try store.saveStation(Self.station(), at: LocalTime(ns: 1))
        try store.clearStation()
        #expect(try store.loadStation() == nil)
        #expect(try store.nights().map(\.id) == [night])
        // And a save after it writes everything again.
        try store.saveStation(Self.station(), at: LocalTime(ns: 2))
        #expect(try DJStore(directory: directory).loadStation()?.station == Self.station())
    }

    @Test func aSavedSectionThatCannotBeReadIsCorruptionAndLeftUntouched() throws {
        do {
            let store = try DJStore(directory: directory)
            try store.saveStation(Self.station(), at: LocalTime(ns: 1))
            try SQLiteConnection(path: path).query("UPDATE station_voters SET addresses = '{not json'")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try DJStore(directory: directory)
        let error = #expect(throws: DJStoreError.self) { try store.loadStation() }
        #expect(error?.code == .corrupt && error?.description.contains("votes") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// A saved station whose `station` row was deleted (by hand, a bad copy) but whose queue is
    /// there is damaged, not "nothing saved": the DJ must not start a fresh station over it.
    @Test func aStationRowThatIsGoneWhileItsQueueIsThereIsCorruption() throws {
        do {
            let store = try DJStore(directory: directory)
            try store.saveStation(Self.station(), at: LocalTime(ns: 1))
            try SQLiteConnection(path: path).query("DELETE FROM station")
        }
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory).loadStation() }
        #expect(
            error?.code == .corrupt && error?.description.contains("untouched") == true, "\(String(describing: error))")
    }

    /// A dj.sqlite of 0 bytes is no database SQLite would refuse (it takes it for a new one): it
    /// is told like a damaged file and left as it is.
    @Test func anEmptyFileIsToldAndLeftAsItIs() throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = #expect(throws: DJStoreError.self) { try DJStore(directory: directory) }
        #expect(
            error?.code == .corrupt && error?.description.contains("0 bytes") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
    }

    /// After a checkpoint (what a DJ's clean quit does) the database file alone holds the saved
    /// station: a copy of dj.sqlite without its -wal is whole.
    @Test func afterACheckpointTheFileAloneHoldsTheStation() throws {
        let store = try DJStore(directory: directory)
        try store.saveStation(Self.station(), at: LocalTime(ns: 1))
        try store.markStopped()
        try store.checkpoint()
        let copy = storageScratchRoot.appendingPathComponent("partyradio-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(atPath: path, toPath: DJStore.path(in: copy))
        let loaded = try DJStore(directory: copy).loadStation()
        #expect(loaded?.station == Self.station() && loaded?.stopped == true)
    }

    @Test func thousandsOfSavesKeepTheFileIntact() throws {
        let store = try DJStore(directory: directory)
        var saved = Self.station()
        var guest: UInt8 = 0
        for n in 1...3_000 {
            saved.positionNs = Int64(n) * 1_000_000
            if n % 3 == 0 {
                guest &+= 1
                _ = saved.votes.apply(voter: Self.key(guest), trackID: "b", choice: n % 2 == 0 ? .up : .down)
            }
            if n % 7 == 0 {
                _ = saved.chat.submit(
                    ChatSend(messageID: UInt64(n), name: "G", text: "line \(n)"), from: Self.key(guest),
                    now: DJTime(ns: Int64(n) * Nanos.seconds(20)))
            }
            if n % 50 == 0 { saved.queue.append(Self.track("q\(n)")) }
            if n % 400 == 0 { saved.queue.shuffle() }
            try store.saveStation(saved, at: LocalTime(ns: Int64(n)))
        }
        #expect(try store.integrityCheck() == "ok")
        #expect(try DJStore(directory: directory).loadStation()?.station == saved)
    }

    @Test func portsAreRemembered() throws {
        let store = try DJStore(directory: directory)
        #expect(try store.ports().isEmpty)
        try store.rememberPorts(["udp": 40_000, "media": 8080])
        try store.rememberPorts(["udp": 40_001])
        #expect(try DJStore(directory: directory).ports() == ["udp": 40_001, "media": 8080])
    }
}
