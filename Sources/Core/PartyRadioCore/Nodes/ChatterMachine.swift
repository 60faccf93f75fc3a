/// `partyradio chat`: finds the station and sends one chat line, retrying every 200 ms until
/// the DJ acknowledges its message ID (the DJ delivers an ID once, so retries never repeat it).
public struct ChatterMachine: NodeMachine {
    public struct Result: Sendable {
        public var station: StationSummary
        public var ack: ChatAck
        public var attempts: Int
    }

    public let send: ChatSend
    public private(set) var request: StationRequest
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?

    public init(
        send: ChatSend, query: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier
    ) {
        self.send = send
        request = StationRequest(query: query, timeoutNs: timeoutNs, interfaceName: interfaceName, verifier: verifier)
    }

    public var nextWakeup: LocalTime? { isFinished ? nil : request.nextWakeup }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        let messageID = send.messageID
        let turn = request.exchange(input, at: now, sending: .chatSend(send), what: "chat line", into: &out) {
            if case .chatAck(let ack) = $0.message, ack.messageID == messageID { ack } else { nil }
        }
        switch turn {
        case .waiting:
            break
        case .answered(let ack, let station):
            result = Result(station: station, ack: ack, attempts: request.attempts)
            isFinished = true
        case .failed(let error):
            exitError = error
            isFinished = true
        }
        return out
    }
}
