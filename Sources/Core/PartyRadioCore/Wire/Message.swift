/// Any protocol v1 message body; the factory that switches on the header's kind.
public enum Message: Equatable, Sendable {
    case stateSnapshot(StateSnapshot)
    case hello(Hello)
    case heartbeat(Heartbeat)
    case leave(Leave)
    case vote(Vote)
    case voteAck(VoteAck)
    case goodbye(Goodbye)
    case query(Query)
    case timePing(TimePing)
    case timePong(TimePong)
    case trackSkipped(TrackSkipped)
    case roster(Roster)
    case chatSend(ChatSend)
    case chatAck(ChatAck)
    case chatLine(ChatLine)
    case requestSend(RequestSend)
    case requestAck(RequestAck)
    case requestVote(RequestVote)
    case requestVoteAck(RequestVoteAck)
    case queueList(QueueList)
    case nextSources(NextSources)
    case cookieChallenge(CookieChallenge)
    case liveFrame(LiveFrame)
    case liveRepair(LiveRepair)
    case liveResend(LiveResend)
    case speakerStatus(SpeakerStatus)
    case speakerControl(SpeakerControl)
    case timePongs(TimePongs)

    public var body: any WireMessage {
        switch self {
        case .stateSnapshot(let m): m
        case .hello(let m): m
        case .heartbeat(let m): m
        case .leave(let m): m
        case .vote(let m): m
        case .voteAck(let m): m
        case .goodbye(let m): m
        case .query(let m): m
        case .timePing(let m): m
        case .timePong(let m): m
        case .trackSkipped(let m): m
        case .roster(let m): m
        case .chatSend(let m): m
        case .chatAck(let m): m
        case .chatLine(let m): m
        case .requestSend(let m): m
        case .requestAck(let m): m
        case .requestVote(let m): m
        case .requestVoteAck(let m): m
        case .queueList(let m): m
        case .nextSources(let m): m
        case .cookieChallenge(let m): m
        case .liveFrame(let m): m
        case .liveRepair(let m): m
        case .liveResend(let m): m
        case .speakerStatus(let m): m
        case .speakerControl(let m): m
        case .timePongs(let m): m
        }
    }

    public var kind: MessageKind { type(of: body).kind }

    static func decode(kind: MessageKind, from reader: inout ByteReader) throws(WireError) -> Message {
        switch kind {
        case .stateSnapshot: .stateSnapshot(try StateSnapshot(from: &reader))
        case .hello: .hello(try Hello(from: &reader))
        case .heartbeat: .heartbeat(try Heartbeat(from: &reader))
        case .leave: .leave(try Leave(from: &reader))
        case .vote: .vote(try Vote(from: &reader))
        case .voteAck: .voteAck(try VoteAck(from: &reader))
        case .goodbye: .goodbye(try Goodbye(from: &reader))
        case .query: .query(try Query(from: &reader))
        case .timePing: .timePing(try TimePing(from: &reader))
        case .timePong: .timePong(try TimePong(from: &reader))
        case .trackSkipped: .trackSkipped(try TrackSkipped(from: &reader))
        case .roster: .roster(try Roster(from: &reader))
        case .chatSend: .chatSend(try ChatSend(from: &reader))
        case .chatAck: .chatAck(try ChatAck(from: &reader))
        case .chatLine: .chatLine(try ChatLine(from: &reader))
        case .requestSend: .requestSend(try RequestSend(from: &reader))
        case .requestAck: .requestAck(try RequestAck(from: &reader))
        case .requestVote: .requestVote(try RequestVote(from: &reader))
        case .requestVoteAck: .requestVoteAck(try RequestVoteAck(from: &reader))
        case .queueList: .queueList(try QueueList(from: &reader))
        case .nextSources: .nextSources(try NextSources(from: &reader))
        case .cookieChallenge: .cookieChallenge(try CookieChallenge(from: &reader))
        case .liveFrame: .liveFrame(try LiveFrame(from: &reader))
        case .liveRepair: .liveRepair(try LiveRepair(from: &reader))
        case .liveResend: .liveResend(try LiveResend(from: &reader))
        case .speakerStatus: .speakerStatus(try SpeakerStatus(from: &reader))
        case .speakerControl: .speakerControl(try SpeakerControl(from: &reader))
        case .timePongs: .timePongs(try TimePongs(from: &reader))
        }
    }
}
