/// A guest's request for a track. Retried until a ``RequestAck`` for its `requestID` comes; the
/// DJ handles each ID once per sender (a retry gets the same answer again).
public struct RequestSend: WireMessage {
    public static let kind = MessageKind.requestSend

    /// What the guest asks for. The guest never sends a URL: the DJ resolves the track itself.
    public enum Wanted: Equatable, Sendable {
        /// A catalog track ID (the guest's node may have found it with a search).
        case catalogID(String)
        /// Title words of a track in the DJ's own library.
        case library(String)
    }

    public enum Limit {
        public static let query = 200
    }

    /// Increasing per sender key (the `request` command takes its clock in microseconds).
    public var requestID: UInt64
    /// The sender's guest name, as for hello.
    public var name: String
    public var wanted: Wanted

    public init(requestID: UInt64, name: String, wanted: Wanted) {
        self.requestID = requestID
        self.name = name
        self.wanted = wanted
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(requestID)
        writer.writeString(name, maxBytes: ChatSend.Limit.name)
        switch wanted {
        case .catalogID(let id):
            writer.write(UInt8(0))
            writer.writeString(id, maxBytes: StateSnapshot.Limit.trackID)
        case .library(let words):
            writer.write(UInt8(1))
            writer.writeString(words, maxBytes: Limit.query)
        }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        requestID = try reader.read(UInt64.self)
        name = try reader.readString(maxBytes: ChatSend.Limit.name)
        let raw = try reader.readUInt8()
        switch raw {
        case 0: wanted = .catalogID(try reader.readString(maxBytes: StateSnapshot.Limit.trackID))
        case 1: wanted = .library(try reader.readString(maxBytes: Limit.query))
        default: throw .malformed("request kind \(raw)")
        }
    }
}

/// The DJ's answer to a ``RequestSend``: queued (and where), or refused and why.
public struct RequestAck: WireMessage, Codable {
    public static let kind = MessageKind.requestAck

    public enum Status: UInt8, Sendable, CaseIterable, Codable {
        /// Queued now; `queueID` names it for votes, `position` is its place among the requests.
        case queued = 0
        /// Queued, but it plays only once the DJ approves it.
        case awaitingApproval = 1
        /// The track was already waiting: counted as this guest's up vote instead.
        case alreadyQueued = 2
        /// The DJ takes no requests.
        case requestsOff = 3
        /// The guest already has `limit` requests waiting.
        case overLimit = 4
        /// No such track (in the catalog, or no title in the DJ's library matched).
        case unknownTrack = 5
        /// The DJ could not look the track up now (the catalog failed); try again.
        case unavailable = 6
        /// Older than a request already answered from this sender.
        case stale = 7
        /// Empty or malformed.
        case rejected = 8
        /// The DJ muted this guest.
        case muted = 9
        /// Guests on this address already have as many requests waiting as one address may
        /// (`--max-requests` for each of `--voters-per-address` guests).
        case addressLimit = 10

        public var isQueued: Bool { self == .queued || self == .awaitingApproval || self == .alreadyQueued }
    }

    public var requestID: UInt64
    public var status: Status
    /// The DJ's ID for the queued request (0 when refused).
    public var queueID: UInt32
    /// 1-based place among the waiting requests (0 when refused).
    public var position: UInt16
    /// The per-guest limit (for ``Status/overLimit``).
    public var limit: UInt16
    public var title: String
    public var artist: String

    public init(
        requestID: UInt64, status: Status, queueID: UInt32 = 0, position: UInt16 = 0, limit: UInt16 = 0,
        title: String = "", artist: String = ""
    ) {
        self.requestID = requestID
        self.status = status
        self.queueID = queueID
        self.position = position
        self.limit = limit
        self.title = title
        self.artist = artist
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(requestID)
        writer.write(status.rawValue)
        writer.write(queueID)
        writer.write(position)
        writer.write(limit)
        writer.writeString(title, maxBytes: StateSnapshot.Limit.text)
        writer.writeString(artist, maxBytes: StateSnapshot.Limit.text)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        requestID = try reader.read(UInt64.self)
        let raw = try reader.readUInt8()
        guard let status = Status(rawValue: raw) else { throw .malformed("request status \(raw)") }
        self.status = status
        queueID = try reader.read(UInt32.self)
        position = try reader.read(UInt16.self)
        limit = try reader.read(UInt16.self)
        title = try reader.readString(maxBytes: StateSnapshot.Limit.text)
        artist = try reader.readString(maxBytes: StateSnapshot.Limit.text)
    }
}

/// A guest's vote on a waiting request (`vote up|down --request ID`); answered by a
/// ``RequestVoteAck``. Applying the same vote twice changes nothing, so retries are safe.
public struct RequestVote: WireMessage {
    public static let kind = MessageKind.requestVote

    public var queueID: UInt32
    public var choice: VoteChoice

    public init(queueID: UInt32, choice: VoteChoice) {
        self.queueID = queueID
        self.choice = choice
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(queueID)
        writer.write(choice.rawValue)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        queueID = try reader.read(UInt32.self)
        let raw = try reader.readUInt8()
        guard let choice = VoteChoice(rawValue: raw) else { throw .malformed("vote choice \(raw)") }
        self.choice = choice
    }
}

/// The DJ's answer to a ``RequestVote``.
public struct RequestVoteAck: WireMessage {
    public static let kind = MessageKind.requestVoteAck

    public enum Status: UInt8, Sendable, CaseIterable {
        /// Recorded (or already recorded with the same choice).
        case counted = 0
        /// The request has already played (or is playing): vote on the track instead.
        case played = 1
        /// The DJ dropped the request.
        case dropped = 2
        /// No request has this ID.
        case unknown = 3
        /// Other keys from the same address have voted on this request already.
        case addressLimit = 4
    }

    /// The sequence number of the vote datagram this answers.
    public var voteSequence: UInt64
    public var queueID: UInt32
    public var status: Status
    /// The sender's vote as the DJ now holds it.
    public var choice: VoteChoice
    public var tally: Tally
    /// 1-based place among the waiting requests after the vote (0 when not waiting).
    public var position: UInt16

    public init(
        voteSequence: UInt64, queueID: UInt32, status: Status, choice: VoteChoice = .clear, tally: Tally = Tally(),
        position: UInt16 = 0
    ) {
        self.voteSequence = voteSequence
        self.queueID = queueID
        self.status = status
        self.choice = choice
        self.tally = tally
        self.position = position
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(voteSequence)
        writer.write(queueID)
        writer.write(status.rawValue)
        writer.write(choice.rawValue)
        writer.write(tally.up)
        writer.write(tally.down)
        writer.write(position)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        voteSequence = try reader.read(UInt64.self)
        queueID = try reader.read(UInt32.self)
        let raw = try reader.readUInt8()
        guard let status = Status(rawValue: raw) else { throw .malformed("request vote status \(raw)") }
        self.status = status
        let rawChoice = try reader.readUInt8()
        guard let choice = VoteChoice(rawValue: rawChoice) else { throw .malformed("vote choice \(rawChoice)") }
        self.choice = choice
        tally = Tally(up: try reader.read(UInt32.self), down: try reader.read(UInt32.self))
        position = try reader.read(UInt16.self)
    }
}
