/// The DJ sets its speakers (kind 27, DJ → speaker, unicast): the volume, mute and delay trim of
/// one speaker (by its key) or of every speaker in a room. Signed by the station key like every DJ
/// message, so a speaker takes it only from its station's pinned key; its replay window drops a
/// copy. ``controlID`` orders controls: a speaker applies each field only from a control newer than
/// the one that last set it (``SpeakerControlState``).
public struct SpeakerControl: WireMessage {
    public static let kind = MessageKind.speakerControl

    /// Whom the control is for.
    public enum Target: Hashable, Sendable {
        case speaker(PublicKey)
        case room(String)
    }

    /// Which settings the control sets (the others are left as they are).
    public struct Fields: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let volume = Fields(rawValue: 1)
        public static let mute = Fields(rawValue: 2)
        public static let delay = Fields(rawValue: 4)
        public static let all: Fields = [.volume, .mute, .delay]
    }

    /// The DJ's clock in nanoseconds when it gave the control, made strictly rising by the DJ: the
    /// later control has the higher ID, across DJ restarts too (the DJ's clock is real time).
    public var controlID: UInt64
    public var target: Target
    public var fields: Fields
    /// The values; only those in ``fields`` are applied (the others are sent in range all the same).
    public var settings: SpeakerSettings

    public init(controlID: UInt64, target: Target, fields: Fields, settings: SpeakerSettings) {
        self.controlID = controlID
        self.target = target
        self.fields = fields
        self.settings = settings
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(controlID)
        switch target {
        case .speaker(let key):
            writer.write(UInt8(0))
            writer.write(bytes: key.bytes)
        case .room(let room):
            writer.write(UInt8(1))
            writer.writeString(room, maxBytes: SpeakerStatus.maxNameBytes)
        }
        writer.write(fields.rawValue)
        settings.encode(into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        controlID = try reader.read(UInt64.self)
        switch try reader.readUInt8() {
        case 0:
            target = .speaker(PublicKey(bytes: try reader.readBytes(PublicKey.byteCount))!)
        case 1:
            let room = try reader.readString(maxBytes: SpeakerStatus.maxNameBytes)
            guard !room.isEmpty else { throw .malformed("empty room") }
            target = .room(room)
        case let other:
            throw .malformed("speaker control target \(other)")
        }
        let raw = try reader.readUInt8()
        fields = Fields(rawValue: raw)
        guard !fields.isEmpty, Fields.all.isSuperset(of: fields) else {
            throw .malformed("speaker control fields \(raw)")
        }
        settings = try SpeakerSettings(from: &reader)
    }
}
