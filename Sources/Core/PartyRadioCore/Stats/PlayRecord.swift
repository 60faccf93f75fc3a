/// One finished play of a track on the station: what the DJ's stats (`partyradio stats`) are
/// made of. The DJ's machine hands these out through ``Effect/record(_:)``; the runtime stores them.
public struct PlayRecord: Hashable, Sendable {
    /// How a play ended.
    public enum Ending: String, Sendable, CaseIterable {
        /// The track played to its end.
        case played
        /// The DJ moved on (`next`, or `prev` to go back).
        case djSkip = "dj_skip"
        /// Enough of the room voted it down (crowd skip).
        case crowdSkip = "crowd_skip"
        /// The station went off air while it played.
        case stopped

        /// Whether the track was cut short by someone (the DJ or the crowd).
        public var isSkip: Bool { self == .djSkip || self == .crowdSkip }
    }

    public var trackID: String
    public var title: String
    public var artist: String
    /// When the play started, on the station (the DJ's) clock.
    public var startedAt: DJTime
    /// Listeners in the room as the track started.
    public var listenersAtStart: Int
    /// The final tally on the track.
    public var up: UInt32
    public var down: UInt32
    public var ending: Ending
    /// The guest whose request it was (their name), nil for the DJ's own queue.
    public var requestedBy: String?

    public init(
        trackID: String, title: String, artist: String, startedAt: DJTime, listenersAtStart: Int, up: UInt32,
        down: UInt32, ending: Ending, requestedBy: String? = nil
    ) {
        self.requestedBy = requestedBy
        self.trackID = trackID
        self.title = title
        self.artist = artist
        self.startedAt = startedAt
        self.listenersAtStart = listenersAtStart
        self.up = up
        self.down = down
        self.ending = ending
    }
}
