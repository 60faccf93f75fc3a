/// One track's plays summed up, for `partyradio stats`.
public struct TrackStats: Hashable, Sendable {
    public var trackID: String
    /// As the last play had them.
    public var title: String
    public var artist: String
    public var plays: Int
    /// The most listeners in the room as one of its plays started.
    public var mostListenersAtStart: Int
    public var up: Int
    public var down: Int
    public var djSkips: Int
    public var crowdSkips: Int
    /// Plays that were a guest's request.
    public var requests: Int
    /// Who requested it, each name once, in the order of their first request.
    public var requesters: [String]

    public init(trackID: String, title: String, artist: String) {
        self.trackID = trackID
        self.title = title
        self.artist = artist
        plays = 0
        mostListenersAtStart = 0
        up = 0
        down = 0
        djSkips = 0
        crowdSkips = 0
        requests = 0
        requesters = []
    }

    public var skips: Int { djSkips + crowdSkips }

    /// Up votes as a share of all votes, 0–100; nil when nobody voted.
    public var approvalPercent: Double? {
        up + down == 0 ? nil : Double(up) * 100 / Double(up + down)
    }

    /// The plays summed up per track, in the order the tracks first played.
    public static func summarize(_ plays: [PlayRecord]) -> [TrackStats] {
        var order: [String] = []
        var byID: [String: TrackStats] = [:]
        for play in plays {
            if byID[play.trackID] == nil { order.append(play.trackID) }
            var stats = byID[play.trackID] ?? TrackStats(trackID: play.trackID, title: play.title, artist: play.artist)
            stats.title = play.title
            stats.artist = play.artist
            stats.plays += 1
            stats.mostListenersAtStart = max(stats.mostListenersAtStart, play.listenersAtStart)
            stats.up += Int(play.up)
            stats.down += Int(play.down)
            if play.ending == .djSkip { stats.djSkips += 1 }
            if play.ending == .crowdSkip { stats.crowdSkips += 1 }
            if let requester = play.requestedBy {
                stats.requests += 1
                if !stats.requesters.contains(requester) { stats.requesters.append(requester) }
            }
            byID[play.trackID] = stats
        }
        return order.compactMap { byID[$0] }
    }

    /// The best and the worst track by approval, ties going to the more played; only tracks that
    /// got votes take part, so both are nil when nobody voted (and the same track when one did).
    public static func bestAndWorst(_ tracks: [TrackStats]) -> (best: TrackStats?, worst: TrackStats?) {
        let voted = tracks.filter { $0.approvalPercent != nil }
        let best = voted.max { a, b in
            (a.approvalPercent ?? 0, a.plays) < (b.approvalPercent ?? 0, b.plays)
        }
        let worst = voted.max { a, b in
            (-(a.approvalPercent ?? 0), a.plays) < (-(b.approvalPercent ?? 0), b.plays)
        }
        return (best, worst)
    }
}
