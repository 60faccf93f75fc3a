/// A listener's controls: its own output (mute, volume) and a vote on the playing track, from the
/// desktop's media keys (MPRIS), the listener's keys on its terminal, or one line each on its stdin
/// (``parse(line:)``). The listener machine takes them as ``NodeInput/listenerControl(_:)``.
public enum ListenerControl: Hashable, Sendable, CustomStringConvertible {
    /// Silences this node's output only (the station plays on).
    case mute
    case unmute
    case toggleMute
    /// This node's volume: a level 0–100, or a step from the level now (the `+` and `-` keys).
    case volume(Volume)
    /// A vote on the track playing now, from this listener's key (as `partyradio vote` sends it).
    case vote(VoteChoice)
    /// Stops listening (the `q` key; a line `quit`).
    case quit

    /// A level or a step, as the DJ's own volume takes them.
    public typealias Volume = DJControl.Volume

    /// The control as a line ``parse(line:)`` takes back.
    public var description: String {
        switch self {
        case .mute: "mute"
        case .unmute: "unmute"
        case .toggleMute: "toggle-mute"
        case .volume(.to(let level)): "volume \(level)"
        case .volume(.by(let step)): step < 0 ? "volume \(step)" : "volume +\(step)"
        case .vote(let choice): "vote \(choice.name)"
        case .quit: "quit"
        }
    }

    /// One line a listener typed (stdin that is not a terminal): a verb (any case) and its
    /// argument. Throws what to tell the user when the verb is unknown or its argument does not fit.
    public static func parse(line: String) throws(ControlError) -> ListenerControl {
        let words = line.trimmingWhitespace().split(separator: " ", omittingEmptySubsequences: true).map {
            $0.lowercased()
        }
        guard let verb = words.first else { throw ControlError(usage(unknown: nil)) }
        let argument = words.count > 1 ? words[1] : nil
        switch verb {
        case "up", "down", "clear":
            return .vote(VoteChoice(name: verb)!)
        case "vote":
            guard let argument, let choice = VoteChoice(name: argument) else {
                throw ControlError("'vote' takes up, down or clear, e.g. 'vote up'.")
            }
            return .vote(choice)
        case "mute": return .mute
        case "unmute": return .unmute
        case "toggle-mute", "toggle": return .toggleMute
        case "volume", "vol":
            guard let argument, let amount = Int(argument) else {
                throw ControlError("'volume' takes 0 to 100, or +N / -N, e.g. 'volume 80'.")
            }
            let relative = argument.hasPrefix("+") || argument.hasPrefix("-")
            return .volume(relative ? .by(min(100, max(-100, amount))) : .to(min(100, max(0, amount))))
        case "quit", "q", "exit": return .quit
        default: throw ControlError(usage(unknown: verb))
        }
    }

    private static func usage(unknown verb: String?) -> String {
        (verb.map { "Unknown command '\($0)'" } ?? "No command")
            + "; use up, down, clear (your vote), mute, unmute, volume N (or +N / -N) or quit."
    }
}
