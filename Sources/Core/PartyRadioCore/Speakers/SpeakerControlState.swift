/// A speaker's settings and, per setting, the ID of the DJ's control that last set it: the rule
/// that a later control wins, per setting (docs/SPEAKERS.md, "Ordering"). A control reordered on
/// the way, or a copy of an old one, sets nothing that a newer control set. Kept in the speaker's
/// state directory, so the order holds across its restarts too.
public struct SpeakerControlState: Hashable, Sendable, Codable {
    public private(set) var settings: SpeakerSettings
    /// The control ID that last set each setting (0: none yet).
    public private(set) var volumeID: UInt64 = 0
    public private(set) var muteID: UInt64 = 0
    public private(set) var delayID: UInt64 = 0

    public init(settings: SpeakerSettings = SpeakerSettings()) {
        self.settings = settings
    }

    /// The newest control taken (what the speaker's status reports as `lastControl`).
    public var lastControl: UInt64 { max(volumeID, muteID, delayID) }

    public enum Outcome: Equatable, Sendable {
        /// Addressed to another speaker or room.
        case notAddressed
        /// Every setting it names was set by a newer control already: nothing changed.
        case stale
        /// Taken: `changed` says whether a setting now differs.
        case applied(changed: Bool)
    }

    /// Takes `control` if it is for this speaker (its key, or its room: names compared as the
    /// DJ's user sees them, case ignored) and newer, per setting, than what set that setting.
    public mutating func apply(_ control: SpeakerControl, key: PublicKey, room: String) -> Outcome {
        switch control.target {
        case .speaker(let target): guard target == key else { return .notAddressed }
        case .room(let target): guard Self.sameName(target, room) else { return .notAddressed }
        }
        guard control.settings.isValid else { return .stale }  // the decoder refuses these already
        let before = settings
        var took = false
        if control.fields.contains(.volume), control.controlID > volumeID {
            volumeID = control.controlID
            settings.volume = control.settings.volume
            took = true
        }
        if control.fields.contains(.mute), control.controlID > muteID {
            muteID = control.controlID
            settings.muted = control.settings.muted
            took = true
        }
        if control.fields.contains(.delay), control.controlID > delayID {
            delayID = control.controlID
            settings.delayMs = control.settings.delayMs
            took = true
        }
        return took ? .applied(changed: settings != before) : .stale
    }

    /// Two names the same for people: cleaned as shown, case ignored; an empty name is no room.
    public static func sameName(_ a: String, _ b: String) -> Bool {
        let a = GuestName.cleaned(a).lowercased()
        return !a.isEmpty && a == GuestName.cleaned(b).lowercased()
    }
}
