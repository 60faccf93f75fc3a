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

    public static let maxNameBytes = 64

    public init(name: String, room: String, settings: SpeakerSettings, playing: Bool, lastControl: UInt64) {
        self.name = name
        self.room = room
        self.settings = settings
        self.playing = playing
        self.lastControl = lastControl
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(name, maxBytes: Self.maxNameBytes)
        writer.writeString(room, maxBytes: Self.maxNameBytes)
        settings.encode(into: &writer)
        writer.write(UInt8(playing ? 1 : 0))
        writer.write(lastControl)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        name = try reader.readString(maxBytes: Self.maxNameBytes)
        room = try reader.readString(maxBytes: Self.maxNameBytes)
        settings = try SpeakerSettings(from: &reader)
        let playing = try reader.readUInt8()
        guard playing <= 1 else { throw .malformed("speaker playing flag \(playing)") }
        self.playing = playing == 1
        lastControl = try reader.read(UInt64.self)
    }
}
