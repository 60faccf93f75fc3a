/// A listener votes on a track. Retried until a ``VoteAck`` for its sequence number arrives;
/// the DJ keeps one vote per sender key per track, so retries are never counted twice.
public struct Vote: WireMessage {
    public static let kind = MessageKind.vote
    public var trackID: String
    public var choice: VoteChoice

    public init(trackID: String, choice: VoteChoice) {
        self.trackID = trackID
        self.choice = choice
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(trackID, maxBytes: StateSnapshot.Limit.trackID)
        writer.write(choice.rawValue)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        trackID = try reader.readString(maxBytes: StateSnapshot.Limit.trackID)
        let raw = try reader.readUInt8()
        guard let choice = VoteChoice(rawValue: raw) else { throw .malformed("vote choice \(raw)") }
        self.choice = choice
    }
}
