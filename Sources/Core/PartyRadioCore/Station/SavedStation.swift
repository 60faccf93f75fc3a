/// What a DJ keeps across a restart, even a `kill -9`: the queue and where it is, the request
/// it plays, the guests' requests with their votes, the tally on the playing track, the chat
/// and the DJ's own settings. The DJ's machine hands it out with ``Effect/save(_:)`` whenever it
/// changes (and every second, for the position); the runtime stores it before anything is
/// acknowledged; ``DJMachine`` starts from it again.
///
/// Listeners are not saved: they come back by themselves with their heartbeats.
public struct SavedStation: Sendable, Equatable, Codable {
    public var queue: [Track]
    public var index: Int
    public var interlude: StationEngine.Interlude?
    /// Where the playing track was when saved.
    public var positionNs: Int64
    public var paused: Bool
    public var repeatMode: StationEngine.RepeatMode
    public var volume: Int
    public var votes: VoteBook
    public var requests: RequestBook
    public var chat: ChatBook

    public init(
        queue: [Track], index: Int, interlude: StationEngine.Interlude?, positionNs: Int64, paused: Bool,
        repeatMode: StationEngine.RepeatMode, volume: Int, votes: VoteBook, requests: RequestBook, chat: ChatBook
    ) {
        self.queue = queue
        self.index = index
        self.interlude = interlude
        self.positionNs = positionNs
        self.paused = paused
        self.repeatMode = repeatMode
        self.volume = volume
        self.votes = votes
        self.requests = requests
        self.chat = chat
    }
}
