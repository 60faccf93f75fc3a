/// The message kinds of protocol v1 (docs/PROTOCOL.md, "Message kinds").
public enum MessageKind: UInt8, Sendable, CaseIterable {
    case stateSnapshot = 1
    case hello = 2
    case heartbeat = 3
    case leave = 4
    case vote = 5
    case voteAck = 6
    case goodbye = 7
    case query = 8
    case timePing = 9
    case timePong = 10
    case trackSkipped = 11
    case roster = 12
    case chatSend = 13
    case chatAck = 14
    case chatLine = 15
    case requestSend = 16
    case requestAck = 17
    case requestVote = 18
    case requestVoteAck = 19
    case queueList = 20
    case nextSources = 21
    case cookieChallenge = 22
    case liveFrame = 23
    case liveRepair = 24
    case liveResend = 25
    case speakerStatus = 26
    case speakerControl = 27
    case timePongs = 28

    /// True for kinds only the DJ sends; listeners verify these against the pinned station key.
    public var isFromDJ: Bool {
        switch self {
        case .stateSnapshot, .voteAck, .goodbye, .timePong, .trackSkipped, .roster, .chatAck, .chatLine, .requestAck,
            .requestVoteAck, .queueList, .nextSources, .cookieChallenge, .liveFrame,
            .liveRepair, .speakerControl, .timePongs:
            true
        case .hello, .heartbeat, .leave, .vote, .query, .timePing, .chatSend, .requestSend, .requestVote, .liveResend,
            .speakerStatus:
            false
        }
    }

    /// Kinds that may come authenticated by a session MAC instead of a signature: a guest's vote,
    /// the one message a guest sends in bursts (docs/PROTOCOL.md, "Session MAC").
    public var takesSessionMAC: Bool { self == .vote }

    /// The one kind that is neither signed nor MACed: the DJ's cookie challenge, which must cost it
    /// no more than the datagram it answers (docs/PROTOCOL.md, "Admission cookies").
    public var isUnauthenticated: Bool { self == .cookieChallenge }

    /// Kinds that may carry an admission cookie after the header: what guests send the DJ.
    public var takesCookie: Bool { !isFromDJ }
}

/// A message body: encodes itself after the header and decodes from the bytes that follow it.
public protocol WireMessage: Sendable, Equatable {
    static var kind: MessageKind { get }
    func encode(into writer: inout ByteWriter)
    init(from reader: inout ByteReader) throws(WireError)
}
