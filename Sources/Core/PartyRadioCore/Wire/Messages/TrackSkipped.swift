/// Why the playing track was cut short, told to every listener (the snapshot that follows
/// only shows that the track changed). Sent to the group twice against loss.
public struct TrackSkipped: WireMessage {
    public static let kind = MessageKind.trackSkipped

    public enum Reason: UInt8, Sendable {
        /// The DJ skipped it (`next`).
        case dj = 0
        /// Enough of the room voted it down (crowd skip).
        case crowd = 1

        public var name: String {
            switch self {
            case .dj: "dj"
            case .crowd: "crowd"
            }
        }
    }

    public var trackID: String
    public var title: String
    public var reason: Reason
    /// Down votes on the track when it was skipped.
    public var down: UInt32
    /// The room the share was taken of: the listeners, or the voters if there were more.
    public var room: UInt32

    public init(trackID: String, title: String, reason: Reason, down: UInt32, room: UInt32) {
        self.trackID = trackID
        self.title = title
        self.reason = reason
        self.down = down
        self.room = room
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(trackID, maxBytes: StateSnapshot.Limit.trackID)
        writer.writeString(title, maxBytes: StateSnapshot.Limit.text)
        writer.write(reason.rawValue)
        writer.write(down)
        writer.write(room)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        trackID = try reader.readString(maxBytes: StateSnapshot.Limit.trackID)
        title = try reader.readString(maxBytes: StateSnapshot.Limit.text)
        let raw = try reader.readUInt8()
        guard let reason = Reason(rawValue: raw) else { throw .malformed("skip reason \(raw)") }
        self.reason = reason
        down = try reader.read(UInt32.self)
        room = try reader.read(UInt32.self)
    }
}
