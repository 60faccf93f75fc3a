/// The DJ's answer to a ``Vote``: whether it counted, and the tally after it.
public struct VoteAck: WireMessage {
    public static let kind = MessageKind.voteAck

    public enum Status: UInt8, Sendable {
        /// The vote is recorded (or was already recorded with the same choice).
        case counted = 0
        /// The vote named a track that is no longer playing; nothing changed.
        case staleTrack = 1
        /// Nothing is playing.
        case noTrack = 2
        /// Other keys from the same machine have voted on this track already: the DJ counts at
        /// most `--voters-per-address` voters per machine (one guest, one vote).
        case addressLimit = 3
        /// The datagram is older than the last vote applied from this key (a replay, or a vote
        /// overtaken by the guest's newer one): nothing changed; `choice` is the vote as it stands.
        case superseded = 4
    }

    /// The sequence number of the vote datagram this answers.
    public var voteSequence: UInt64
    public var status: Status
    public var trackID: String
    /// The sender's vote as the DJ now holds it.
    public var choice: VoteChoice
    public var tally: Tally
    public var listenerCount: UInt32

    public init(
        voteSequence: UInt64, status: Status, trackID: String, choice: VoteChoice, tally: Tally,
        listenerCount: UInt32
    ) {
        self.voteSequence = voteSequence
        self.status = status
        self.trackID = trackID
        self.choice = choice
        self.tally = tally
        self.listenerCount = listenerCount
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(voteSequence)
        writer.write(status.rawValue)
        writer.writeString(trackID, maxBytes: StateSnapshot.Limit.trackID)
        writer.write(choice.rawValue)
        writer.write(tally.up)
        writer.write(tally.down)
        writer.write(listenerCount)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        voteSequence = try reader.read(UInt64.self)
        let rawStatus = try reader.readUInt8()
        guard let status = Status(rawValue: rawStatus) else { throw .malformed("ack status \(rawStatus)") }
        self.status = status
        trackID = try reader.readString(maxBytes: StateSnapshot.Limit.trackID)
        let rawChoice = try reader.readUInt8()
        guard let choice = VoteChoice(rawValue: rawChoice) else { throw .malformed("vote choice \(rawChoice)") }
        self.choice = choice
        tally = Tally(up: try reader.read(UInt32.self), down: try reader.read(UInt32.self))
        listenerCount = try reader.read(UInt32.self)
    }
}
