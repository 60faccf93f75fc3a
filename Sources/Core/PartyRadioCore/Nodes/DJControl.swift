/// One of the DJ's controls, typed where it comes in: a key (``ControlReader`` in the CLI), a line
/// on stdin (``parse(line:)``), a desktop media key (MPRIS) or the DJ's web controls. The DJ
/// machine takes it as ``NodeInput/djControl(_:)`` and never sees a string.
public enum DJControl: Hashable, Sendable, CustomStringConvertible {
    case next
    case previous
    case pause
    case resume
    /// Pause when playing, resume when paused.
    case toggle
    /// Shuffles the tracks still to come.
    case shuffle
    /// `repeat off|one|all`; nil: the next mode in turn (the `r` key).
    case setRepeat(StationEngine.RepeatMode?)
    case volume(Volume)
    /// To this position of the playing track (negative: its start).
    case seek(toNs: Int64)
    /// Searches the catalog; the results are reported to the DJ.
    case search(String)
    /// Queues these catalog track IDs.
    case add([String])
    /// A guest, by the name it gave or a prefix of its key's fingerprint.
    case mute(String)
    case unmute(String)
    /// Shows the web page's QR code: the guests' page, or the DJ's own link.
    case qr(forDJ: Bool)
    /// Crowd skip's share of the room in percent, 0 (off) to 100.
    case crowdSkip(percent: Int)
    case approve(RequestPick)
    case drop(RequestPick)
    /// Sets a speaker (by name) or every speaker of a room (docs/SPEAKERS.md).
    case speaker(String, SpeakerChange)
    /// The DJ's speaker keys, on the speaker or room the DJ picked last (``SpeakerKey``).
    case speakerKey(SpeakerKey)
    case quit

    /// The DJ's terminal keys for its speakers: `k` picks the next speaker or room, `[` and `]`
    /// step its volume, `M` flips its mute (docs/SPEAKERS.md).
    public enum SpeakerKey: Hashable, Sendable, CustomStringConvertible {
        case pick
        /// A step of the picked speaker's volume, −100…100.
        case volume(by: Int)
        case toggleMute

        public var description: String {
            switch self {
            case .pick: "pick"
            case .volume(let step): step < 0 ? "volume \(step)" : "volume +\(step)"
            case .toggleMute: "mute"
            }
        }
    }

    /// One setting of a speaker, in range (``parse(line:)`` refuses a value out of it).
    public enum SpeakerChange: Hashable, Sendable, CustomStringConvertible {
        /// 0–100.
        case volume(Int)
        case mute(Bool)
        /// −500…+500 ms.
        case delay(Int)

        public var description: String {
            switch self {
            case .volume(let level): "volume \(level)"
            case .mute(let on): "mute \(on ? "on" : "off")"
            case .delay(let ms): "delay \(ms)"
            }
        }
    }

    /// The DJ's local volume: a level, or a step from the level now (the `+` and `-` keys).
    public enum Volume: Hashable, Sendable {
        /// 0–100.
        case to(Int)
        /// -100–100.
        case by(Int)
    }

    /// Which request `approve` or `drop` means.
    public enum RequestPick: Hashable, Sendable {
        /// `approve next`: the first request waiting for approval; `drop next`: the top of the list.
        case next
        case number(UInt32)
    }

    /// A position is at most this many seconds either way (a bigger one is a typo, not a place).
    public static let seekLimitSeconds = 1e9

    /// The control as a line ``parse(line:)`` takes back (for logs and the web page's answer).
    public var description: String {
        switch self {
        case .next: "next"
        case .previous: "prev"
        case .pause: "pause"
        case .resume: "resume"
        case .toggle: "toggle"
        case .shuffle: "shuffle"
        case .setRepeat(let mode): mode.map { "repeat \($0.rawValue)" } ?? "repeat"
        case .volume(.to(let level)): "volume \(level)"
        case .volume(.by(let step)): step < 0 ? "volume \(step)" : "volume +\(step)"
        case .seek(let ns): "seek \(Double(ns) / 1e9)"
        case .search(let term): "search \(term)"
        case .add(let ids): "add \(ids.joined(separator: " "))"
        case .mute(let who): "mute \(who)"
        case .unmute(let who): "unmute \(who)"
        case .qr(let forDJ): forDJ ? "qr dj" : "qr"
        case .crowdSkip(let percent): "crowd-skip \(percent)"
        case .approve(let pick): "approve \(pick.word)"
        case .drop(let pick): "drop \(pick.word)"
        case .speaker(let who, let change): "speaker \(who) \(change)"
        case .speakerKey(let key): "speaker key \(key)"
        case .quit: "quit"
        }
    }

    /// One line the DJ typed (stdin that is not a terminal): a verb (any case) and its argument.
    /// Throws what to tell the DJ when the verb is unknown or its argument does not fit.
    public static func parse(line: String) throws(ControlError) -> DJControl {
        let words = line.trimmingWhitespace().split(separator: " ", maxSplits: 1).map(String.init)
        guard let verb = words.first else { throw ControlError(Self.usage(unknown: nil)) }
        return try parse(verb: verb, argument: words.count == 2 ? words[1] : nil)
    }

    /// A verb and its argument (a line's two parts, or the web page's `command` and `arg` fields).
    public static func parse(verb: String, argument: String?) throws(ControlError) -> DJControl {
        let verb = verb.lowercased()
        let argument = argument?.trimmingWhitespace()
        let word = argument?.lowercased()
        let given = argument.flatMap { $0.isEmpty ? nil : $0 }
        switch verb {
        case "next", "n", "skip": return .next
        case "prev", "previous", "p", "back": return .previous
        case "pause": return .pause
        case "resume", "play": return .resume
        case "toggle": return .toggle
        case "shuffle": return .shuffle
        case "repeat":
            guard let given else { return .setRepeat(nil) }
            guard let mode = StationEngine.RepeatMode(rawValue: given.lowercased()) else {
                throw ControlError("'repeat' takes off, one or all (or nothing, to cycle).")
            }
            return .setRepeat(mode)
        case "volume", "vol":
            guard let given, let amount = Int(given) else {
                throw ControlError("'volume' takes 0 to 100, or +N / -N, e.g. 'volume 80'.")
            }
            let relative = given.hasPrefix("+") || given.hasPrefix("-")
            return .volume(relative ? .by(min(100, max(-100, amount))) : .to(min(100, max(0, amount))))
        case "seek":
            guard let given, let seconds = Double(given), seconds.isFinite, seconds.magnitude < seekLimitSeconds else {
                throw ControlError("'seek' takes a position in seconds, e.g. 'seek 42'.")
            }
            return .seek(toNs: Nanos.seconds(seconds))
        case "search":
            guard let given else { throw ControlError("'search' takes a term, e.g. 'search daft punk'.") }
            return .search(given)
        case "add":
            let ids = (given ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            guard !ids.isEmpty else { throw ControlError("'add' takes catalog track IDs, e.g. 'add 1440857781'.") }
            return .add(ids)
        case "mute", "unmute":
            guard let given else {
                throw ControlError("'\(verb)' takes a guest's name or key fingerprint, e.g. '\(verb) Bob'.")
            }
            return verb == "mute" ? .mute(given) : .unmute(given)
        case "qr":
            return .qr(forDJ: word == "dj")
        case "crowd-skip", "crowdskip":
            guard let given, let percent = Int(given), (0...100).contains(percent) else {
                throw ControlError("'crowd-skip' takes a share of the room from 0 (off) to 100, e.g. 'crowd-skip 50'.")
            }
            return .crowdSkip(percent: percent)
        case "approve", "drop":
            let pick: RequestPick
            if word == "next" {
                pick = .next
            } else if let digits = word?.drop(while: { $0 == "#" }), let number = UInt32(digits) {
                pick = .number(number)
            } else {
                throw ControlError("'\(verb)' takes a request's number, e.g. '\(verb) 3', or 'next'.")
            }
            return verb == "approve" ? .approve(pick) : .drop(pick)
        case "speaker":
            return try parseSpeaker(given ?? "")
        case "quit", "q", "exit":
            return .quit
        default:
            throw ControlError(Self.usage(unknown: verb))
        }
    }

    public static let speakerUsage =
        "'speaker' takes a speaker's name or a room, then volume 0-100, mute on|off or delay -500..500 (ms), "
        + "e.g. 'speaker Kitchen volume 20'."

    /// `speaker NAME|ROOM volume N | mute on|off | delay MS`: the name is every word before the last two.
    static func parseSpeaker(_ argument: String) throws(ControlError) -> DJControl {
        let words = argument.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard words.count >= 3 else { throw ControlError(speakerUsage) }
        let who = words.dropLast(2).joined(separator: " ")
        let value = words[words.count - 1]
        switch words[words.count - 2].lowercased() {
        case "volume", "vol":
            guard let level = Int(value) else { throw ControlError(speakerUsage) }
            guard SpeakerSettings.volumeRange.contains(level) else {
                throw ControlError("A speaker's volume is 0 to 100; \(level) is out of range.")
            }
            return .speaker(who, .volume(level))
        case "mute":
            switch value.lowercased() {
            case "on", "yes", "1": return .speaker(who, .mute(true))
            case "off", "no", "0": return .speaker(who, .mute(false))
            default: throw ControlError("'mute' takes on or off, e.g. 'speaker \(who) mute on'.")
            }
        case "delay":
            guard let ms = Int(value) else { throw ControlError(speakerUsage) }
            guard SpeakerSettings.delayRange.contains(ms) else {
                throw ControlError("A speaker's delay trim is -500 to +500 ms; \(ms) is out of range.")
            }
            return .speaker(who, .delay(ms))
        default:
            throw ControlError(speakerUsage)
        }
    }

    private static func usage(unknown verb: String?) -> String {
        (verb.map { "Unknown command '\($0)'" } ?? "No command") + "; use next, prev, pause, resume, seek SECONDS, "
            + "shuffle, repeat [off|one|all], volume N, search TERM, add ID, approve N|next, drop N|next, mute NAME, "
            + "unmute NAME, crowd-skip PERCENT, speaker NAME|ROOM volume|mute|delay VALUE, qr [dj] or quit."
    }
}

extension DJControl.RequestPick {
    fileprivate var word: String {
        switch self {
        case .next: "next"
        case .number(let number): String(number)
        }
    }
}

/// A control line that could not be taken: what to tell the user, as a sentence.
public struct ControlError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
