import PartyRadioCore

/// How requests and what plays next are said: in JSON (snake_case names) and to people.
enum RequestText {
    /// The answer in one sentence, for the guest who asked (`you`; `station` names the station
    /// that refused) or the DJ (a guest's name).
    static func sentence(_ ack: RequestAck, guest: String? = nil, station: String? = nil) -> String {
        let title = "“\(GuestName.cleaned(ack.title))” by \(GuestName.cleaned(ack.artist))"
        let who = guest.map { GuestName.fromNetwork($0)?.value ?? "?" }
        let place = "number \(ack.position) of the requests (request #\(ack.queueID))"
        switch ack.status {
        case .queued:
            return who.map { "\($0) requested \(title): \(place)." } ?? "Queued \(title): \(place)."
        case .awaitingApproval:
            return who.map {
                "\($0) requested \(title): \(place), waiting for your approval ('approve \(ack.queueID)')."
            }
                ?? "Requested \(title): \(place); it plays once the DJ approves it."
        case .alreadyQueued:
            return who.map { "\($0) asked for \(title) again: counted as an up vote; \(place)." }
                ?? "\(title) was already requested: counted as your up vote; \(place)."
        case .requestsOff:
            return refusal(who, station, "the DJ takes no requests")
        case .overLimit:
            return refusal(who, station, "at most \(ack.limit) requests per guest may wait; vote for others meanwhile")
        case .unknownTrack:
            return refusal(who, station, "no such track (not in the catalog, or no title in the DJ's library matches)")
        case .unavailable:
            return refusal(who, station, "the DJ could not reach the catalog just now; try again")
        case .stale:
            return refusal(who, station, "a newer request from the same key was already answered")
        case .rejected:
            return refusal(who, station, "the request was empty or malformed")
        case .muted:
            return refusal(who, station, "the DJ muted this guest")
        case .addressLimit:
            return refusal(
                who, station,
                "guests on this machine's address already have as many requests waiting as one address may")
        }
    }

    private static func refusal(_ who: String?, _ station: String?, _ why: String) -> String {
        who.map { "Refused \($0)'s request: \(why)." }
            ?? "\(station.map { "The DJ of '\(Render.plain($0))'" } ?? "The DJ") refused the request: \(why)."
    }

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
