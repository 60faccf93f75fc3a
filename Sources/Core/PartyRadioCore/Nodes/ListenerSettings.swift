/// What a listener set for itself, for its own view: the local mute and volume, and its vote as the
/// DJ last counted it (``NodeEvent/listenerSettings(_:)``).
public struct ListenerSettings: Hashable, Sendable {
    /// This machine's output is muted (the station plays on).
    public var muted: Bool
    /// This machine's volume, 0–100 (kept while muted).
    public var volume: Int
    /// The listener's vote as the DJ counted it, on the track `voteTrackID`; nil before any.
    /// It holds only while that track plays: the DJ resets votes on a track change.
    public var vote: VoteChoice?
    public var voteTrackID: String?

    public init(muted: Bool = false, volume: Int = 100, vote: VoteChoice? = nil, voteTrackID: String? = nil) {
        self.muted = muted
        self.volume = volume
        self.vote = vote
        self.voteTrackID = voteTrackID
    }

    /// The vote on `trackID` (the track playing now): nil when the vote counted was on another.
    public func vote(on trackID: String?) -> VoteChoice? {
        trackID != nil && trackID == voteTrackID ? vote : nil
    }
}
