import PartyRadioCore
import PartyRadioSQLite

/// The DJ's stats: one session (a night) per DJ run, one row per finished play.
extension DJStore {
    // MARK: Writing (the DJ)

    /// A DJ run starts: returns its session's id, for ``record(_:session:)`` and ``endSession(_:at:)``.
    public func beginSession(station: String, at started: DJTime) throws(DJStoreError) -> Int64 {
        do throws(SQLiteError) {
            return try connection.query(
                "INSERT INTO sessions (station, started_ns) VALUES (?, ?) RETURNING id",
                [.text(station), .integer(started.ns)]
            ).first?.first?.integer ?? 0
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    /// The last night of `station` if it never ended (its DJ was killed): a DJ that carries on from
    /// its saved station carries on with that night too.
    public func unfinishedSession(station: String) throws(DJStoreError) -> Int64? {
        do throws(SQLiteError) {
            let last = try connection.query("SELECT id, station, ended_ns FROM sessions ORDER BY id DESC LIMIT 1").first
            guard let last, last[1].text == station, last[2] == .null else { return nil }
            return last[0].integer
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
    }

    public func endSession(_ session: Int64, at ended: DJTime) throws(DJStoreError) {
        do throws(SQLiteError) {
            try connection.query(
                "UPDATE sessions SET ended_ns = ? WHERE id = ?", [.integer(ended.ns), .integer(session)])
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    /// Keeps one finished play of `session`.
    public func record(_ play: PlayRecord, session: Int64) throws(DJStoreError) {
        do throws(SQLiteError) {
            try connection.query(
                """
                INSERT INTO plays (
                    session_id, track_id, title, artist, started_ns, listeners, up, down, ending, requested_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(session), .text(play.trackID), .text(play.title), .text(play.artist),
                    .integer(play.startedAt.ns), .integer(Int64(play.listenersAtStart)), .integer(Int64(play.up)),
                    .integer(Int64(play.down)), .text(play.ending.rawValue),
                    play.requestedBy.map { .text($0) } ?? .null,
                ])
        } catch {
            throw DJStoreError.from(error, "write to", path: path)
        }
    }

    // MARK: Reading (`partyradio stats`)

    /// Every night (DJ run), oldest first, with its plays in order; `latestOnly`: the last one.
    public func nights(latestOnly: Bool = false) throws(DJStoreError) -> [Night] {
        let sessions =
            "SELECT id, station, started_ns, ended_ns FROM sessions ORDER BY id" + (latestOnly ? " DESC LIMIT 1" : "")
        let plays = """
            SELECT track_id, title, artist, started_ns, listeners, up, down, ending, requested_by
            FROM plays WHERE session_id = ? ORDER BY started_ns, id
            """
        do throws(SQLiteError) {
            var nights: [Night] = []
            for row in try connection.query(sessions) {
                let id = row[0].integer ?? 0
                var night = Night(
                    id: id, station: row[1].text ?? "", startedAt: DJTime(ns: row[2].integer ?? 0),
                    endedAt: row[3].integer.map(DJTime.init(ns:)), plays: [])
                for p in try connection.query(plays, [.integer(id)]) {
                    night.plays.append(
                        PlayRecord(
                            trackID: p[0].text ?? "", title: p[1].text ?? "", artist: p[2].text ?? "",
                            startedAt: DJTime(ns: p[3].integer ?? 0), listenersAtStart: Int(p[4].integer ?? 0),
                            up: UInt32(clamping: p[5].integer ?? 0), down: UInt32(clamping: p[6].integer ?? 0),
                            ending: PlayRecord.Ending(rawValue: p[7].text ?? "") ?? .played, requestedBy: p[8].text))
                }
                nights.append(night)
            }
            return nights
        } catch {
            throw DJStoreError.from(error, "read", path: path)
        }
    }

    /// One DJ run and what it played.
    public struct Night: Sendable, Equatable {
        public var id: Int64
        public var station: String
        public var startedAt: DJTime
        /// Nil while the DJ runs (or if it was killed).
        public var endedAt: DJTime?
        public var plays: [PlayRecord]
    }
}
