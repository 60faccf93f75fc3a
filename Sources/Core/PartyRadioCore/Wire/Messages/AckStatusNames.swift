// The DJ's answers carry a status; `--json`, `--json-events` and the web page name it in
// snake_case. One table per status here, so every output says the same name.

extension VoteAck.Status {
    public var name: String {
        switch self {
        case .counted: "counted"
        case .staleTrack: "stale_track"
        case .superseded: "superseded"
        case .noTrack: "no_track"
        case .addressLimit: "address_limit"
        }
    }
}

extension ChatAck.Status {
    public var name: String {
        switch self {
        case .delivered: "delivered"
        case .duplicate: "duplicate"
        case .rateLimited: "rate_limited"
        case .muted: "muted"
        case .rejected: "rejected"
        case .stale: "stale"
        }
    }
}

extension RequestAck.Status {
    public var name: String {
        switch self {
        case .queued: "queued"
        case .awaitingApproval: "awaiting_approval"
        case .alreadyQueued: "already_queued"
        case .requestsOff: "requests_off"
        case .overLimit: "over_limit"
        case .unknownTrack: "unknown_track"
        case .unavailable: "unavailable"
        case .stale: "stale"
        case .rejected: "rejected"
        case .muted: "muted"
        case .addressLimit: "address_limit"
        }
    }
}

extension RequestVoteAck.Status {
    public var name: String {
        switch self {
        case .counted: "counted"
        case .played: "played"
        case .dropped: "dropped"
        case .unknown: "unknown"
        case .addressLimit: "address_limit"
        }
    }
}
