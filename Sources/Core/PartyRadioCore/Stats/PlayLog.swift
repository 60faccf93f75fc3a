/// Turns the DJ's track changes into finished plays (``PlayRecord``). Pure: the DJ tells it
/// when a track starts and how the one before ended, with the tally it had; it keeps the one
/// play that is open.
public struct PlayLog: Sendable {
    private struct Open: Sendable {
        var track: Track
        var startedAt: DJTime
        var listeners: Int
        var requestedBy: String?
    }

    private var open: Open?

    public init() {}

    /// The track whose play is open, if any.
    public var playing: Track? { open?.track }

    /// A track started (or started again): closes the open play, if any, as `ending` with its final
    /// `tally`, and opens one for `track`. Returns the closed play.
    public mutating func started(
        _ track: Track, at now: DJTime, listeners: Int, previousEnding ending: PlayRecord.Ending, tally: Tally,
        requestedBy: String? = nil
    ) -> PlayRecord? {
        let closed = close(ending, tally: tally)
        open = Open(track: track, startedAt: now, listeners: listeners, requestedBy: requestedBy)
        return closed
    }

    /// The open play ended (`ending`) with `tally` and nothing follows it (yet); returns it.
    public mutating func close(_ ending: PlayRecord.Ending, tally: Tally) -> PlayRecord? {
        guard let play = open else { return nil }
        open = nil
        return PlayRecord(
            trackID: play.track.id, title: play.track.title, artist: play.track.artist, startedAt: play.startedAt,
            listenersAtStart: play.listeners, up: tally.up, down: tally.down, ending: ending,
            requestedBy: play.requestedBy)
    }
}
