/// One chat line (`partyradio chat`). The DJ delivers a message ID once, so retries never repeat it.
public struct GuestChat: StationRequest {
    public let send: ChatSend

    public init(_ send: ChatSend) { self.send = send }

    public var message: Message? { .chatSend(send) }

    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<ChatAck> {
        if case .chatAck(let ack) = message, ack.messageID == send.messageID { .answered(ack) } else { .ignored }
    }

    public func timedOut(at station: StationSummary) -> NodeError { unacknowledged("chat line", at: station) }
}
