/// Decides what this node's player should do as the station changes: load the now-playing
/// source, pause and resume with the station, start again when the anchor moves, retry after a
/// failure. Pure; the runtime's player driver carries the commands out and keeps the player on
/// the station position between them.
public struct PlaybackPlanner: Sendable {
    /// After a failed load, wait this long before trying again.
    public static let retryAfterErrorNs = Nanos.seconds(1)

    /// False with `--no-audio`: the planner commands nothing.
    public let isEnabled: Bool
    private var snapshot: StateSnapshot?
    /// The track and source the player has loaded (nil: nothing).
    public private(set) var loaded: LoadedTrack?
    public private(set) var isPaused = false
    private var retryAt: LocalTime?
    /// The track whose load failed last, waiting out ``retryAfterErrorNs``.
    private var lastFailed: String?

    public struct LoadedTrack: Hashable, Sendable {
        public var id: String
        public var source: String
    }

    public init(isEnabled: Bool) { self.isEnabled = isEnabled }

    /// Whether the player should be playing now.
    public var isPlaying: Bool { loaded != nil && !isPaused }

    /// A new snapshot. `clockKnown` is false while a listener has no DJ clock estimate: it
    /// loads nothing then (the first ``tick(clockKnown:now:)`` after sync does).
    public mutating func follow(_ new: StateSnapshot, clockKnown: Bool, now: LocalTime) -> [PlayerCommand] {
        let old = snapshot
        snapshot = new
        guard isEnabled else { return [] }
        guard let track = new.nowPlaying else {
            defer { loaded = nil }
            return loaded != nil ? [.stop] : []
        }
        // A pause needs no clock: a loaded player follows it at once.
        if !clockKnown {
            guard loaded != nil, new.anchor.isPaused, !isPaused else { return [] }
            isPaused = true
            return [.pause]
        }
        if loaded?.id != track.id || loaded?.source != track.source {
            // After a failure the same track waits out the retry delay (``tick`` loads it then);
            // another track is a fresh start.
            if loaded == nil, let retryAt, now < retryAt, lastFailed == track.id { return [] }
            return load(track, now: now)
        }
        guard new.anchor.isPaused != isPaused || (old.map { $0.anchor != new.anchor } ?? false) else { return [] }
        // Paused, resumed or moved: pause, or start again precisely from the new anchor.
        isPaused = new.anchor.isPaused
        return [isPaused ? .pause : .resume]
    }

    /// Loads what should be loaded once the clock is known, or again after a failure.
    public mutating func tick(clockKnown: Bool, now: LocalTime) -> [PlayerCommand] {
        if let retryAt {
            guard now >= retryAt else { return [] }
            self.retryAt = nil
        }
        guard isEnabled, clockKnown, loaded == nil, let track = snapshot?.nowPlaying else { return [] }
        return load(track, now: now)
    }

    /// When ``tick(clockKnown:now:)`` next has something to do (a retry), if anything.
    public var nextRetry: LocalTime? { loaded == nil && snapshot?.nowPlaying != nil ? retryAt : nil }

    /// The player could not play the source: try again after ``retryAfterErrorNs``.
    public mutating func playerFailed(now: LocalTime) {
        lastFailed = loaded?.id
        loaded = nil
        retryAt = now + Self.retryAfterErrorNs
    }

    private mutating func load(_ track: Track, now: LocalTime) -> [PlayerCommand] {
        let paused = snapshot?.anchor.isPaused ?? false
        loaded = LoadedTrack(id: track.id, source: track.source)
        isPaused = paused
        retryAt = nil
        return [.load(track, paused: paused)]
    }
}
