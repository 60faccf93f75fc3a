import CSQLite
import Foundation
import PartyRadioCore
import PartyRadioSQLite

/// The saved station: what a DJ needs to start again where it was after any exit, `kill -9`
/// included.
///
/// Tables, by how often they change: `station` is one small row (where in the queue, the
/// position, pause, repeat, volume, the request on the air, when) written at every save;
/// `station_queue` has one row per track and is written only when the queue changed (only the new
/// rows when tracks were added at its end); `station_voters` has one row per voter on the playing
/// track and a save writes only the voters that changed (the track they voted on is the
/// `votes_track` book); `station_books` holds the requests and the chat, each as one JSON document
/// written only when it changed. Each save is one
/// transaction, so the file holds one whole station or the one before.
extension DJStore {
    /// A station as the file holds it.
    public struct Saved: Sendable, Equatable {
        public var station: SavedStation
        /// The DJ-clock instant of the save.
        public var savedAt: LocalTime
        /// The DJ went off air (quit, a signal) after this save, rather than being killed.
        public var stopped: Bool
    }

    /// The saved station; nil when none is saved. A station row that is gone while the rest of
    /// the saved station is there (a row deleted by hand or a damaged copy) is an error, not a
    /// fresh station.
    public func loadStation() throws(DJStoreError) -> Saved? {
        let row: [SQLiteConnection.Value]
        let queueRows: [[SQLiteConnection.Value]]
        var books: [String: String] = [:]
        var voterRows: [[SQLiteConnection.Value]] = []
        do throws(SQLiteError) {
            guard
                let first = try connection.query(
                    """
                    SELECT queue_index, position_ns, paused, repeat_mode, volume, interlude, saved_at_ns, stopped
                    FROM station
                    """
                ).first
            else {
                let rest =
                    try connection.query(
                        """
                        SELECT (SELECT count(*) FROM station_queue) + (SELECT count(*) FROM station_books)
                            + (SELECT count(*) FROM station_voters)
                        """
                    ).first?.first?.integer ?? 0
                if rest > 0 {
                    throw SQLiteError(
                        code: SQLITE_CORRUPT, message: "the saved station's row is missing but its queue is there")
                }
                return nil
            }
            row = first
            queueRows = try connection.query(
                "SELECT track_id, title, artist, album, duration_ms, source FROM station_queue ORDER BY position")
            for book in try connection.query("SELECT name, json FROM station_books") {
                if let name = book[0].text, let json = book[1].text { books[name] = json }
            }
            voterRows = try connection.query("SELECT voter, choice, addresses, sequence FROM station_voters")
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
        let queue = queueRows.map { track in
            Track(
                id: track[0].text ?? "", title: track[1].text ?? "", artist: track[2].text ?? "",
                album: track[3].text ?? "", durationMs: UInt32(clamping: track[4].integer ?? 0),
                source: track[5].text ?? "")
        }
        guard let index = row[0].integer, let position = row[1].integer, let paused = row[2].integer,
            let repeatMode = row[3].text.flatMap(StationEngine.RepeatMode.init(rawValue:)),
            let volume = row[4].integer, let savedAt = row[6].integer
        else { throw DJStoreError.corrupt(path: path, "the saved station's row is incomplete") }
        let station = SavedStation(
            queue: queue, index: Int(clamping: index), interlude: try decode(row[5].text, "interlude"),
            positionNs: position, paused: paused != 0, repeatMode: repeatMode, volume: Int(clamping: volume),
            votes: try votes(book: books["votes"], track: books["votes_track"], rows: voterRows),
            requests: try decode(books["requests"], "requests") ?? RequestBook(),
            chat: try decode(books["chat"], "chat") ?? ChatBook())
        written = station
        return Saved(station: station, savedAt: LocalTime(ns: savedAt), stopped: row[7].integer == 1)
    }

    /// Stores `station` as saved at `now`, in one transaction, writing only what changed since the
    /// last save (or load) through this store.
    public func saveStation(_ station: SavedStation, at now: LocalTime) throws(DJStoreError) {
        let before = written
        let encoder = JSONEncoder()
        var voters = writtenVoters
        do throws(SQLiteError) {
            let interlude: SQLiteConnection.Value =
                if let playing = station.interlude { .text(try json(playing, encoder)) } else { .null }
            try connection.transaction { () throws(SQLiteError) in
                try connection.query(
                    """
                    INSERT OR REPLACE INTO station (
                        id, queue_index, position_ns, paused, repeat_mode, volume, interlude, saved_at_ns, stopped)
                    VALUES (1, ?, ?, ?, ?, ?, ?, ?, 0)
                    """,
                    [
                        .integer(Int64(station.index)), .integer(station.positionNs), .integer(station.paused ? 1 : 0),
                        .text(station.repeatMode.rawValue), .integer(Int64(station.volume)),
                        interlude, .integer(now.ns),
                    ])
                if before?.queue != station.queue { try writeQueue(station.queue, before: before?.queue) }
                if before?.votes != station.votes || voters == nil {
                    voters = try writeVotes(station.votes, over: voters, encoder)
                }
                if before?.requests != station.requests { try writeBook("requests", json(station.requests, encoder)) }
                if before?.chat != station.chat { try writeBook("chat", json(station.chat, encoder)) }
            }
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
        written = station
        writtenVoters = voters
    }

    /// The DJ went off air on purpose: the next start resumes where it stopped rather than
    /// carrying on as if it had played on.
    public func markStopped() throws(DJStoreError) {
        do throws(SQLiteError) { try connection.query("UPDATE station SET stopped = 1") } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    /// Forgets the saved station (`dj --fresh`); the stats stay.
    public func clearStation() throws(DJStoreError) {
        do throws(SQLiteError) {
            try connection.transaction { () throws(SQLiteError) in
                for table in ["station", "station_queue", "station_books", "station_voters"] {
                    try connection.query("DELETE FROM \(table)")
                }
            }
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
        written = nil
        writtenVoters = nil
    }

    /// The ports the DJ listened on (`udp`, `media`), to take again after a restart if free.
    public func ports() throws(DJStoreError) -> [String: UInt16] {
        do throws(SQLiteError) {
            var ports: [String: UInt16] = [:]
            for row in try connection.query("SELECT name, port FROM station_ports") {
                if let name = row[0].text, let port = row[1].integer, let value = UInt16(exactly: port) {
                    ports[name] = value
                }
            }
            return ports
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
    }

    public func rememberPorts(_ ports: [String: UInt16]) throws(DJStoreError) {
        do throws(SQLiteError) {
            try connection.transaction { () throws(SQLiteError) in
                for (name, port) in ports.sorted(by: { $0.key < $1.key }) {
                    try connection.query(
                        "INSERT OR REPLACE INTO station_ports (name, port) VALUES (?, ?)",
                        [.text(name), .integer(Int64(port))])
                }
            }
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    /// The queue's rows: only the new ones when tracks were added at the end, else all of them.
    private func writeQueue(_ queue: [Track], before: [Track]?) throws(SQLiteError) {
        var start = 0
        if let before, before.count <= queue.count, queue.starts(with: before) {
            start = before.count
        } else {
            try connection.query("DELETE FROM station_queue")
        }
        for position in start..<queue.count {
            let track = queue[position]
            try connection.query(
                """
                INSERT INTO station_queue (position, track_id, title, artist, album, duration_ms, source)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(Int64(position)), .text(track.id), .text(track.title), .text(track.artist),
                    .text(track.album), .integer(Int64(track.durationMs)), .text(track.source),
                ])
        }
    }

    /// The votes as they were saved: an older file's one "votes" book, or the rows of
    /// `station_voters` with the track they are on.
    private func votes(book: String?, track: String?, rows: [[SQLiteConnection.Value]]) throws(DJStoreError)
        -> VoteBook
    {
        if let book {
            writtenVoters = nil
            return try decode(book, "votes") ?? VoteBook()
        }
        let trackID: VoteTrack? = try decode(track, "votes_track")
        var voters: [PublicKey: VoteBook.Voter] = [:]
        for row in rows {
            guard let key = row[0].text.flatMap(PublicKey.init(base64url:)),
                let addresses: [String] = try decode(row[2].text, "votes (a voter's addresses)")
            else { throw DJStoreError.corrupt(path: path, "a saved voter's row (votes) is incomplete") }
            let choice = row[1].text.flatMap { name in VoteChoice.allCases.first { $0.name == name } }
            voters[key] = VoteBook.Voter(
                choice: choice, addresses: addresses, sequence: row[3].integer.map { UInt64(bitPattern: $0) })
        }
        writtenVoters = WrittenVoters(trackID: trackID?.trackID, rows: voters)
        return VoteBook(trackID: trackID?.trackID, voterRows: voters)
    }

    /// The track the saved votes are on (JSON, so that no track is told from an empty ID).
    private struct VoteTrack: Codable { var trackID: String? }

    /// Writes the votes: every voter when the track changed (or what the file holds is unknown),
    /// else only the voters that changed since `written`; returns the rows the file then holds
    /// (the caller keeps them once the transaction commits).
    private func writeVotes(
        _ book: VoteBook, over written: WrittenVoters?, _ encoder: JSONEncoder
    ) throws(SQLiteError) -> WrittenVoters {
        let rows = book.voterRows
        var old = written?.rows ?? [:]
        if written == nil || written?.trackID != book.trackID {
            try connection.query("DELETE FROM station_voters")
            try connection.query("DELETE FROM station_books WHERE name = 'votes'")
            try writeBook("votes_track", json(VoteTrack(trackID: book.trackID), encoder))
            old = [:]
        }
        for (key, row) in rows where old[key] != row {
            try connection.query(
                "INSERT OR REPLACE INTO station_voters (voter, choice, addresses, sequence) VALUES (?, ?, ?, ?)",
                [
                    .text(key.base64url), row.choice.map { .text($0.name) } ?? .null,
                    .text(Self.jsonArray(row.addresses)),
                    row.sequence.map { .integer(Int64(bitPattern: $0)) } ?? .null,
                ])
        }
        for key in old.keys where rows[key] == nil {
            try connection.query("DELETE FROM station_voters WHERE voter = ?", [.text(key.base64url)])
        }
        return WrittenVoters(trackID: book.trackID, rows: rows)
    }

    /// `strings` as a JSON array (what loading decodes) without JSONEncoder's machinery: a saved
    /// voter's addresses, up to 64 rows a save.
    static func jsonArray(_ strings: [String]) -> String { JSON.array(strings.map(JSON.string)).rendered }

    private func writeBook(_ name: String, _ json: String) throws(SQLiteError) {
        try connection.query(
            "INSERT OR REPLACE INTO station_books (name, json) VALUES (?, ?)", [.text(name), .text(json)])
    }

    private func json(_ value: some Encodable, _ encoder: JSONEncoder) throws(SQLiteError) -> String {
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw SQLiteError(code: SQLITE_MISUSE, message: "cannot encode the station: \(error)")
        }
    }

    private func decode<T: Decodable>(_ text: String?, _ what: String) throws(DJStoreError) -> T? {
        guard let text else { return nil }
        do { return try JSONDecoder().decode(T.self, from: Data(text.utf8)) } catch {
            throw DJStoreError.corrupt(path: path, "the saved \(what) cannot be read: \(error)")
        }
    }
}
