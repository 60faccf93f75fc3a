/// A speaker says what it is and what it plays (kind 26, speaker → DJ, unicast): sent beside its
/// hello and heartbeats, and at once when a control changed it. A DJ that knows the kind keeps the
/// sender apart from its guests (``SpeakerBook``); one from before drops it as an unknown kind and
/// sees an ordinary listener.
public struct SpeakerStatus: WireMessage {
    public static let kind = MessageKind.speakerStatus
    /// The speaker's name and room (`speaker --name`, `--room`; the room may be empty): untrusted,
    /// cleaned by whoever shows them.
    public var name: String
    public var room: String
    /// The speaker's settings as it applies them now.
    public var settings: SpeakerSettings
    /// Whether its player plays the station now.
    public var playing: Bool
    /// The newest control ID the speaker took (0: none), for the DJ's resends.
    public var lastControl: UInt64
    /// How far its sound is from where the station is now, in microseconds (positive: late), as
    /// its player last measured it; nil: not measured (not playing, or a speaker from before).
    public var syncErrorUs: Int32?
    /// Why its output does not play, when it failed (a sound server gone, a track it cannot play),
    /// retried meanwhile; empty: no trouble. Untrusted text, cleaned by whoever shows it.
    public var trouble: String

    public static let maxNameBytes = 64
    public static let maxTroubleBytes = 160
    /// On the wire for "not measured".
    static let unmeasured = Int32.min

    public init(
        name: String, room: String, settings: SpeakerSettings, playing: Bool, lastControl: UInt64,
        syncErrorUs: Int32? = nil, trouble: String = ""
    ) {
        self.name = name
        self.room = room
        self.settings = settings
        self.playing = playing
        self.lastControl = lastControl
        self.syncErrorUs = syncErrorUs == Self.unmeasured ? nil : syncErrorUs
        self.trouble = trouble
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(name, maxBytes: Self.maxNameBytes)
        writer.writeString(room, maxBytes: Self.maxNameBytes)
        settings.encode(into: &writer)
        writer.write(UInt8(playing ? 1 : 0))
        writer.write(lastControl)
        writer.write(syncErrorUs ?? Self.unmeasured)
        writer.writeString(trouble, maxBytes: Self.maxTroubleBytes)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        name = try reader.readString(maxBytes: Self.maxNameBytes)
        room = try reader.readString(maxBytes: Self.maxNameBytes)
        settings = try SpeakerSettings(from: &reader)
        let playing = try reader.readUInt8()
        guard playing <= 1 else { throw .malformed("speaker playing flag \(playing)") }
        self.playing = playing == 1
        lastControl = try reader.read(UInt64.self)
        let error = try reader.read(Int32.self)
        syncErrorUs = error == Self.unmeasured ? nil : error
        trouble = try reader.readString(maxBytes: Self.maxTroubleBytes)
    }
}
