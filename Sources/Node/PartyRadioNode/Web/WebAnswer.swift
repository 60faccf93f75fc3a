import PartyRadioCore

/// The DJ's answer to a guest's action, as the page gets it: `ok`, the status's name, one
/// sentence for the guest, and the tally where there is one (docs/WEB.md).
enum WebAnswer {
    static func json(_ message: Message) -> JSON {
        switch message {
        case .voteAck(let ack):
            let sentence: String =
                switch ack.status {
                case .counted:
                    ack.choice == .clear ? "Your vote is cleared." : "Your vote \(ack.choice.name) counts."
                case .staleTrack: "That track is no longer playing; vote on the one playing now."
                case .noTrack: "Nothing is playing."
                case .addressLimit:
                    "Another guest on your network address has voted on this track already (one guest, one vote)."
                }
            return answer(ack.status == .counted, ack.status.name, sentence, tally: ack.tally)
        case .requestVoteAck(let ack):
            let sentence: String =
                switch ack.status {
                case .counted: "Your vote on request #\(ack.queueID) counts."
                case .played: "Request #\(ack.queueID) has played already."
                case .dropped: "The DJ dropped request #\(ack.queueID)."
                case .unknown: "No request #\(ack.queueID) waits."
                case .addressLimit:
                    "Another guest on your network address has voted on this request already."
                }
            return answer(ack.status == .counted, ack.status.name, sentence, tally: ack.tally)
        case .requestAck(let ack):
            let title = "“\(GuestName.cleaned(ack.title))” by \(GuestName.cleaned(ack.artist))"
            let sentence: String =
                switch ack.status {
                case .queued: "Requested \(title): number \(ack.position) of the requests."
                case .awaitingApproval:
                    "Requested \(title): it plays once the DJ approves it."
                case .alreadyQueued:
                    "\(title) was already requested: counted as your up vote."
                case .requestsOff: "The DJ takes no requests."
                case .overLimit:
                    "At most \(ack.limit) of your requests may wait; vote for others meanwhile."
                case .unknownTrack: "No such track."
                case .unavailable: "The DJ could not reach the catalog just now; try again."
                case .stale: "A newer request of yours was answered already."
                case .rejected: "The request was empty or malformed."
                case .muted: "The DJ muted you."
                case .addressLimit:
                    "Guests on your network address already have as many requests waiting as one may."
                }
            var json = answer(ack.status.isQueued, ack.status.name, sentence, tally: nil)
            if case .object(var pairs) = json, ack.status.isQueued {
                pairs.append(("queue_id", .int(ack.queueID)))
                json = .object(pairs)
            }
            return json
        case .chatAck(let ack):
            let sentence: String =
                switch ack.status {
                case .delivered: "Sent."
                case .duplicate: "Sent."
                case .rateLimited:
                    "Too many lines too fast; try again in \((ack.retryAfterMs + 999) / 1000) s."
                case .muted: "The DJ muted you."
                case .rejected:
                    "A chat line is 1 to \(ChatSend.Limit.characters) characters of plain text."
                case .stale: "A newer line of yours was delivered already."
                }
            return answer(ack.status == .delivered || ack.status == .duplicate, ack.status.name, sentence, tally: nil)
        default:
            return answer(false, "unexpected", "The DJ answered something unexpected.", tally: nil)
        }
    }

    private static func answer(_ ok: Bool, _ status: String, _ sentence: String, tally: Tally?) -> JSON {
        var pairs: [(String, JSON)] = [("ok", .bool(ok)), ("status", .string(status)), ("message", .string(sentence))]
        if let tally { pairs.append(("tally", .object([("up", .int(tally.up)), ("down", .int(tally.down))]))) }
        return .object(pairs)
    }
}
