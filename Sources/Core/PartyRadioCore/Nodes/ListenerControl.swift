/// A listener's controls: its own output (mute, volume) and a vote on the playing track, from the
/// desktop's media keys (MPRIS). The listener machine takes them as ``NodeInput/listenerControl(_:)``.
public enum ListenerControl: Hashable, Sendable, CustomStringConvertible {
    /// Silences this node's output only (the station plays on).
    case mute
    case unmute
    case toggleMute
    /// This node's volume, 0–100.
    case volume(Int)
    /// A vote on the track playing now, from this listener's key (as `partyradio vote` sends it).
    case vote(VoteChoice)

    public var description: String {
        switch self {
        case .mute: "mute"
        case .unmute: "unmute"
        case .toggleMute: "toggle-mute"
        case .volume(let level): "volume \(level)"
        case .vote(let choice): "vote \(choice.name)"
        }
    }
}
