/// A vote on a waiting request (`partyradio vote up|down|clear --request ID`). The DJ keeps one
/// vote per key per request, so a vote that arrives several times counts once.
public struct GuestRequestVote: StationRequest {
    public let vote: RequestVote

    public init(_ vote: RequestVote) { self.vote = vote }

    public var message: Message? { .requestVote(vote) }

    /// An answer about this request ID answers one of this command's datagrams.
    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<RequestVoteAck> {
        if case .requestVoteAck(let ack) = message, ack.queueID == vote.queueID { .answered(ack) } else { .ignored }
    }

    public func timedOut(at station: StationSummary) -> NodeError { unacknowledged("vote", at: station) }
}
