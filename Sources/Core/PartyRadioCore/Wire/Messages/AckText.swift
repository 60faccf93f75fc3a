/// What the DJ's answer to a guest means, in one sentence: the one wording that `vote`, `chat`,
/// `request` and `vote --request` print, a listener reports and the web page shows (and, for a
/// request, the DJ's own line about it). `station` names the station where the reader may not
/// know which (the CLI); the web page and a listener leave it out. Names and titles come from the
/// network and are cleaned of control characters here.
public enum AckText {
    /// A vote on the playing track; `title` is the track's, when known.
    public static func sentence(_ ack: VoteAck, title: String? = nil, station: String? = nil) -> String {
        let at = station.map { " at '\(GuestName.cleaned($0))'" } ?? ""
        switch ack.status {
        case .counted:
            let track = title.map { "“\(GuestName.cleaned($0))”" } ?? "the track playing"
            let verb = ack.choice == .clear ? "Cleared your vote on" : "Voted \(ack.choice.name) on"
            return "\(verb) \(track)\(at): \(ack.tally.up) up, \(ack.tally.down) down, \(ack.listenerCount) listening."
        case .staleTrack:
            return "Not counted: the track changed before the vote arrived; vote on the one playing now."
        case .superseded:
            let stands = ack.choice == .clear ? "no vote" : "a vote \(ack.choice.name)"
            return "Not counted: a newer vote from this guest was counted already; \(stands) stands\(at)."
        case .noTrack:
            return "Not counted: \(station.map { "'\(GuestName.cleaned($0))'" } ?? "the station") is between tracks; "
                + "try again in a moment."
        case .addressLimit:
            return "Not counted: another guest on this machine has voted on this track already (one guest, "
                + "one vote; the DJ can allow more with --voters-per-address)."
        }
    }

    /// A vote on a waiting request.
    public static func sentence(_ ack: RequestVoteAck, station: String? = nil) -> String {
        let at = station.map { " at '\(GuestName.cleaned($0))'" } ?? ""
        let id = ack.queueID
        switch ack.status {
        case .counted:
            let verb = ack.choice == .clear ? "Cleared your vote on" : "Voted \(ack.choice.name) on"
            return "\(verb) request #\(id)\(at): \(ack.tally.up) up, \(ack.tally.down) down; number \(ack.position) "
                + "of the requests."
        case .played:
            return "Request #\(id) has already played\(at); vote on the track playing now instead."
        case .dropped:
            return "The DJ\(station.map { " of '\(GuestName.cleaned($0))'" } ?? "") dropped request #\(id); nothing "
                + "to vote on."
        case .unknown:
            return "No request #\(id) waits\(at); the numbers are in the list of what plays next."
        case .addressLimit:
            return "Another guest on this machine has voted on request #\(id)\(at) already (one guest, one "
                + "vote; the DJ can allow more with --voters-per-address)."
        }
    }

    /// A request, for the guest who asked; or, with `guest` (the name sent with it), for the DJ.
    public static func sentence(_ ack: RequestAck, guest: String? = nil, station: String? = nil) -> String {
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
                "guests on this machine already have as many requests waiting as one machine may"
            )
        }
    }

    private static func refusal(_ who: String?, _ station: String?, _ why: String) -> String {
        who.map { "Refused \($0)'s request: \(why)." }
            ?? "\(station.map { "The DJ of '\(GuestName.cleaned($0))'" } ?? "The DJ") refused the request: \(why)."
    }

    /// A chat line; `name` is the guest name it went out under.
    public static func sentence(_ ack: ChatAck, station: String? = nil, as name: String? = nil) -> String {
        let at = station.map { " at '\(GuestName.cleaned($0))'" } ?? ""
        switch ack.status {
        case .delivered, .duplicate:
            guard let station else { return "Sent." }
            return "Said to '\(GuestName.cleaned(station))'" + (name.map { " as \(GuestName.cleaned($0))" } ?? "") + "."
        case .rateLimited:
            return
                "Not sent: at most \(ChatBook.rateLimit) lines per \(ChatBook.rateWindowNs / Nanos.perSecond) s from one "
                + "guest\(at); try again in "
                + "\((ack.retryAfterMs + 999) / 1000) s."
        case .muted:
            return "The DJ\(station.map { " of '\(GuestName.cleaned($0))'" } ?? "") has muted you in the chat."
        case .rejected:
            return "Not sent: a chat line is 1 to \(ChatSend.Limit.characters) characters of plain text."
        case .stale:
            return "Not shown: a newer line of yours was delivered\(at) already."
        }
    }
}

extension VoteAck.Status {
    /// The vote counts.
    public var isAccepted: Bool { self == .counted }
}

extension RequestVoteAck.Status {
    /// The vote counts.
    public var isAccepted: Bool { self == .counted }
}

extension ChatAck.Status {
    /// The line is in the chat (now, or already: a retry).
    public var isAccepted: Bool { self == .delivered || self == .duplicate }
}
