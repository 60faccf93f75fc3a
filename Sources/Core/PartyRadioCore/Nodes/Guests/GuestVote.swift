/// A vote on the track playing now: what `partyradio vote` sends, and a listener's vote (the
/// desktop's media keys). Retries are new datagrams of the same vote; the DJ keeps one vote per
/// key per track, so however many arrive it is counted once.
public struct GuestVote: StationRequest {
    /// The DJ's answer, with the title of the track voted on (from the last snapshot heard).
    public struct Answer: Sendable {
        public var ack: VoteAck
        public var trackTitle: String?
    }

    public let choice: VoteChoice
    /// The track voted on; nil until the station is found (then the one playing).
    public private(set) var trackID: String?
    /// How many more times a "stale track" answer moves the vote to the track playing now.
    public private(set) var retargets: Int

    /// - Parameters:
    ///   - trackID: the track; nil: the one the station plays when it is found.
    ///   - retargets: how often to follow the station to its new track when the vote came too
    ///     late for the one it named (the user meant the one playing now).
    public init(_ choice: VoteChoice, trackID: String? = nil, retargets: Int = 3) {
        self.choice = choice
        self.trackID = trackID
        self.retargets = retargets
    }

    public var message: Message? { trackID.map { .vote(Vote(trackID: $0, choice: choice)) } }

    public mutating func found(_ station: StationSummary) -> NodeError? {
        guard trackID == nil else { return nil }
        trackID = station.snapshot.nowPlaying?.id
        guard trackID == nil else { return nil }
        return NodeError(
            .refused, "'\(station.name)' is not playing anything to vote on; try again when a track plays.")
    }

    /// A vote counted answers the vote on the track it names; a refusal answers the vote sent.
    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<Answer> {
        guard case .voteAck(let ack) = message, ack.status != .counted || ack.trackID == trackID else {
            return .ignored
        }
        if ack.status == .staleTrack, retargets > 0 {
            retargets -= 1
            trackID = ack.trackID
            return .changed
        }
        let playing = station.snapshot.nowPlaying
        return .answered(Answer(ack: ack, trackTitle: playing?.id == ack.trackID ? playing?.title : nil))
    }

    public func timedOut(at station: StationSummary) -> NodeError { unacknowledged("vote", at: station) }
}
