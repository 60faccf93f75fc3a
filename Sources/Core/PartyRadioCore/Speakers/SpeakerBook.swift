/// The DJ's speakers, kept apart from its guests (docs/SPEAKERS.md): who they are (name and room as
/// they said, cleaned; the host they speak from), what they report (settings, playing), and what
/// the DJ asked of each that they have not confirmed yet (resent until their status shows it).
public struct SpeakerBook: Sendable {
    /// A speaker silent this long is gone: it sends its status every 0.5 s
    /// (``ListenerMachine/speakerStatusIntervalNs``), so four in a row lost are forgiven, and one
    /// that lost its power is shown gone within the issue's 3 s (a guest takes 3.5 s).
    public static let timeoutNs = Nanos.ms(2500)
    /// A control a speaker's status does not show yet is sent again this often, for this long.
    public static let resendIntervalNs = Nanos.ms(500)
    public static let resendForNs = Nanos.seconds(5)
    /// At most this many speakers are kept (the least recently heard makes room).
    public static let capacity = 256

    /// One speaker as the DJ shows it.
    public struct Entry: Hashable, Sendable {
        public var key: PublicKey
        /// Cleaned as shown (``GuestName/fromNetwork(_:)``); the room may be empty.
        public var name: String
        public var room: String
        public var host: String
        public var address: PeerAddress
        public var settings: SpeakerSettings
        public var playing: Bool
        public var lastControl: UInt64
        public var lastHeard: LocalTime
        /// Its sync error as it last reported it (µs, positive: late); nil: not measured.
        public var syncErrorUs: Int32?
        /// Why its output fails, as it said (cleaned as shown); empty: no trouble.
        public var trouble: String

        public init(
            key: PublicKey, name: String, room: String, host: String, address: PeerAddress, settings: SpeakerSettings,
            playing: Bool, lastControl: UInt64, lastHeard: LocalTime, syncErrorUs: Int32? = nil, trouble: String = ""
        ) {
            self.syncErrorUs = syncErrorUs
            self.trouble = trouble
            self.key = key
            self.name = name
            self.room = room
            self.host = host
            self.address = address
            self.settings = settings
            self.playing = playing
            self.lastControl = lastControl
            self.lastHeard = lastHeard
        }
    }

    /// What the DJ asked of one speaker and its status does not show yet.
    struct Wanted: Sendable {
        var control: SpeakerControl
        var lastSent: LocalTime
        var until: LocalTime
    }

    public private(set) var entries: [PublicKey: Entry] = [:]
    private var wanted: [PublicKey: Wanted] = [:]
    private var lastControlID: UInt64 = 0

    public init() {}

    /// The speakers in the order the DJ lists them: by room, then name, then host.
    public var list: [Entry] {
        entries.values.sorted {
            ($0.room.lowercased(), $0.name.lowercased(), $0.host, $0.key.fingerprint) < (
                $1.room.lowercased(), $1.name.lowercased(), $1.host, $1.key.fingerprint
            )
        }
    }

    public func isSpeaker(_ key: PublicKey) -> Bool { entries[key] != nil }

    /// A status from `key` at `address`. Returns whether what the DJ shows changed (a new speaker
    /// included).
    public mutating func heard(_ status: SpeakerStatus, from key: PublicKey, at address: PeerAddress, now: LocalTime)
        -> Bool
    {
        let name = GuestName.fromNetwork(status.name)?.value ?? key.fingerprint
        let room = GuestName.fromNetwork(status.room)?.value ?? ""
        let entry = Entry(
            key: key, name: name, room: room, host: address.host, address: address, settings: status.settings,
            playing: status.playing, lastControl: status.lastControl, lastHeard: now, syncErrorUs: status.syncErrorUs,
            trouble: ShownText.cleaned(status.trouble))
        let old = entries[key]
        if old == nil, entries.count >= Self.capacity,
            let oldest = entries.values.min(by: { $0.lastHeard < $1.lastHeard })
        {
            entries[oldest.key] = nil
            wanted[oldest.key] = nil
        }
        entries[key] = entry
        if let want = wanted[key], Self.shows(status, want.control) { wanted[key] = nil }
        guard let old else { return true }
        return (old.name, old.room, old.host, old.settings, old.playing, old.trouble)
            != (entry.name, entry.room, entry.host, entry.settings, entry.playing, entry.trouble)
            || Self.syncErrorMoved(from: old.syncErrorUs, to: entry.syncErrorUs)
    }

    /// A sync error is shown anew when it comes or goes, or moves by a millisecond or more: the
    /// list does not change with every heartbeat's few microseconds.
    public static let syncErrorStepUs: Int32 = 1000

    static func syncErrorMoved(from old: Int32?, to new: Int32?) -> Bool {
        switch (old, new) {
        case (nil, nil): false
        case (let old?, let new?): abs(Int64(new) - Int64(old)) >= Int64(syncErrorStepUs)
        default: true
        }
    }

    /// A hello or heartbeat from a known speaker keeps it.
    public mutating func keep(_ key: PublicKey, now: LocalTime) {
        entries[key]?.lastHeard = now
    }

    /// Forgets `key` (a leave). Returns whether it was a speaker.
    public mutating func remove(_ key: PublicKey) -> Bool {
        wanted[key] = nil
        return entries.removeValue(forKey: key) != nil
    }

    /// Forgets speakers silent for ``timeoutNs``. Returns whether any went.
    public mutating func expire(now: LocalTime) -> Bool {
        let gone = entries.values.filter { now - $0.lastHeard > Self.timeoutNs }.map(\.key)
        for key in gone { _ = remove(key) }
        return !gone.isEmpty
    }

    /// Whom a DJ's words name: the speakers with that name, else those in that room (case ignored).
    public enum Pick: Equatable, Sendable {
        case speakers([PublicKey])
        case room(String, [PublicKey])
        case none
    }

    public func pick(_ words: String) -> Pick {
        let all = list
        let named = all.filter { SpeakerControlState.sameName($0.name, words) }
        if !named.isEmpty { return .speakers(named.map(\.key)) }
        let inRoom = all.filter { SpeakerControlState.sameName($0.room, words) }
        if let room = inRoom.first?.room { return .room(room, inRoom.map(\.key)) }
        return .none
    }

    /// A speaker's settings as its status shows them, with what the DJ asked of it and it has not
    /// confirmed yet.
    public func shownSettings(of key: PublicKey) -> SpeakerSettings {
        var settings = entries[key]?.settings ?? SpeakerSettings()
        if let control = wanted[key]?.control {
            for field in [SpeakerControl.Fields.volume, .mute, .delay] where control.fields.contains(field) {
                settings.set(field, from: control.settings)
            }
        }
        return settings
    }

    /// A new control ID: the DJ's clock, strictly above the last one.
    public mutating func nextControlID(now: LocalTime) -> UInt64 {
        lastControlID = max(lastControlID &+ 1, UInt64(max(1, now.ns)))
        return lastControlID
    }

    /// The DJ asked `change` of these speakers: what to send each now (with whatever an earlier
    /// control asked of it that its status does not show yet), resent until its status shows it.
    mutating func want(_ change: SpeakerControl, of keys: [PublicKey], now: LocalTime) -> [(
        SpeakerControl, PeerAddress
    )] {
        var out: [(SpeakerControl, PeerAddress)] = []
        for key in keys {
            var control = change
            if let earlier = wanted[key]?.control {
                // Still unconfirmed: what the earlier one set and this one does not goes on too.
                control.fields.formUnion(earlier.fields)
                for field in [SpeakerControl.Fields.volume, .mute, .delay]
                where earlier.fields.contains(field) && !change.fields.contains(field) {
                    control.settings.set(field, from: earlier.settings)
                }
            }
            control.target = .speaker(key)
            wanted[key] = Wanted(control: control, lastSent: now, until: now + Self.resendForNs)
            if let entry = entries[key] { out.append((control, entry.address)) }
        }
        return out
    }

    /// The controls due again at `now`, each to its speaker's address.
    mutating func resends(now: LocalTime) -> [(SpeakerControl, PeerAddress)] {
        var out: [(SpeakerControl, PeerAddress)] = []
        for (key, want) in wanted {
            guard now < want.until else {
                wanted[key] = nil
                continue
            }
            guard now - want.lastSent >= Self.resendIntervalNs, let entry = entries[key] else { continue }
            wanted[key]?.lastSent = now
            out.append((want.control, entry.address))
        }
        return out
    }

    var nextResend: LocalTime? { wanted.values.map { $0.lastSent + Self.resendIntervalNs }.min() }

    /// Whether `status` shows every setting `control` sets (by value: a status can come from before
    /// the control, and then shows it only if the values were so already).
    static func shows(_ status: SpeakerStatus, _ control: SpeakerControl) -> Bool {
        let have = status.settings
        let want = control.settings
        return (!control.fields.contains(.volume) || have.volume == want.volume)
            && (!control.fields.contains(.mute) || have.muted == want.muted)
            && (!control.fields.contains(.delay) || have.delayMs == want.delayMs)
    }
}

extension SpeakerSettings {
    /// Takes one setting from `other`.
    mutating func set(_ field: SpeakerControl.Fields, from other: SpeakerSettings) {
        if field == .volume { volume = other.volume }
        if field == .mute { muted = other.muted }
        if field == .delay { delayMs = other.delayMs }
    }
}

extension SpeakerBook.Entry {
    /// The speaker as `--json-events`, the DJ's page and `partyradio speakers --json` give it; names
    /// and rooms are the speaker's own words, cleaned again here.
    public var json: JSON {
        .object([
            ("name", .string(GuestName.cleaned(name))), ("room", .string(GuestName.cleaned(room))),
            ("host", .string(host)), ("key_fingerprint", .string(key.fingerprint)),
            ("volume", .int(settings.volume)), ("muted", .bool(settings.muted)),
            ("delay_ms", .int(settings.delayMs)), ("playing", .bool(playing)),
            ("sync_error_ms", syncErrorUs.map { .double(Double($0) / 1000) } ?? .null),
            ("trouble", .string(ShownText.cleaned(trouble))),
        ])
    }

    /// The speaker on one line, for the DJ's terminal.
    public var line: String {
        Self.line(
            name: name, room: room, host: host, settings: settings, playing: playing,
            syncErrorMs: syncErrorUs.map { Double($0) / 1000 }, trouble: trouble)
    }

    /// A speaker on one line (its words cleaned here): the DJ's terminal, `partyradio speakers`.
    public static func line(
        name: String, room: String, host: String, settings: SpeakerSettings, playing: Bool, syncErrorMs: Double?,
        trouble: String
    ) -> String {
        let room = GuestName.cleaned(room)
        let trouble = ShownText.cleaned(trouble)
        let sync =
            syncErrorMs.map { ms -> String in
                let tenths = Int((ms.magnitude * 10).rounded())
                return ", sync \(ms < 0 && tenths > 0 ? "-" : "+")\(tenths / 10).\(tenths % 10) ms"
            } ?? ""
        return GuestName.cleaned(name) + (room.isEmpty ? "" : " (\(room))") + " at \(ShownText.cleaned(host)): volume "
            + "\(settings.volume)\(settings.muted ? " muted" : ""), delay \(settings.delayMs) ms, "
            + (playing ? "playing" : "not playing") + sync + (trouble.isEmpty ? "" : ", trouble: \(trouble)")
    }
}
