import PartyRadioCore

/// How what plays next is said: in JSON (snake_case names) and to people (an answer to a request
/// is said by ``AckText``).
enum RequestText {
    static func entry(_ entry: QueueList.Entry) -> JSON {
        .object([
            ("request_id", entry.isRequest ? .int(entry.queueID) : .null), ("track_id", .string(entry.trackID)),
            ("title", .string(entry.title)), ("artist", .string(entry.artist)),
            ("requested_by", entry.isRequest ? .string(entry.requester) : .null), ("up", .int(entry.tally.up)),
            ("down", .int(entry.tally.down)), ("awaiting_approval", .bool(entry.awaitingApproval)),
        ])
    }

    static func list(_ list: QueueList) -> [(String, JSON)] {
        [
            ("requests_mode", .string(list.mode.rawValue)), ("requests_waiting", .int(list.total)),
            ("up_next", .array(list.entries.map(entry))),
        ]
    }

    /// One line per entry: "#3 Title — Artist  asked by Bob  +2 −0" (the DJ's own tracks unnumbered).
    static func lines(_ list: QueueList, limit: Int = .max, requestsOnly: Bool = false) -> [String] {
        list.entries.filter { $0.isRequest || !requestsOnly }.prefix(limit).map { entry in
            let track = "\(GuestName.cleaned(entry.title)) — \(GuestName.cleaned(entry.artist))"
            guard entry.isRequest else { return "    \(track)" }
            let who = GuestName.fromNetwork(entry.requester)?.value ?? "?"
            return "#\(entry.queueID) \(track)  asked by \(who)  +\(entry.tally.up) −\(entry.tally.down)"
                + (entry.awaitingApproval ? "  (awaiting approval)" : "")
        }
    }
}
