/// What the DJ's live capture hands the DJ machine (``NodeInput/live(_:)``): frames it read,
/// stamped and encoded, and the source going away and coming back.
public enum LiveInput: Sendable {
    /// A frame to send, stamped by ``LiveStamper`` and Opus-encoded on the capture's thread.
    case frame(LiveFrame)
    /// The source went away (its writer closed the pipe, standard input ended): the station is
    /// silent until it comes back. The sentence says what happened.
    case silent(String)
    /// The source could not be read at all: the station stops with this error.
    case failed(NodeError)
    /// What the MPRIS player the DJ follows (`--live-player`) does now, whenever it changes; nil:
    /// no player is there (it left the bus, or none plays), and the station goes on as ``Track/live``.
    case player(LivePlayerState?)
}

/// What a live DJ asks of the player it follows over MPRIS: a method of its
/// `org.mpris.MediaPlayer2.Player` interface (``member``).
public enum LivePlayerCall: Hashable, Sendable {
    case next
    case previous
    case play
    case pause
    /// `SetPosition(trackID, positionUs)`: the DJ's seek, on the track the player said it plays
    /// (a player ignores it for another track, as MPRIS says).
    case setPosition(trackID: String, positionUs: Int64)

    /// The method's name.
    public var member: String {
        switch self {
        case .next: "Next"
        case .previous: "Previous"
        case .play: "Play"
        case .pause: "Pause"
        case .setPosition: "SetPosition"
        }
    }
}

extension Track {
    /// A live station's now playing while no player says what plays: "Live", no length (it never
    /// ends by itself), and the source `live:`, which is no URL: listeners play it from the live
    /// frames (docs/LIVE.md).
    public static let live = Track(id: "live", title: "Live", artist: "", album: "", durationMs: 0, source: "live:")

    /// Whether this is a live station's track (``live``) rather than a file or a preview.
    public var isLive: Bool { source.hasPrefix("live:") }
}
