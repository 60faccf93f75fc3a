/// `partyradio vote up|down|clear --request ID`: finds the station and votes on a waiting
/// request, retrying every 200 ms until the DJ answers. The DJ keeps one vote per key per
/// request, so a vote that arrives several times counts once.
public struct RequestVoterMachine: NodeMachine {
    public struct Result: Sendable {
        public var station: StationSummary
        public var ack: RequestVoteAck
        public var attempts: Int
        /// From the first vote datagram to the answer.
        public var latencyNs: Int64
    }

    public let vote: RequestVote
    public private(set) var request: StationRequest
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?

    public init(
        vote: RequestVote, station: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier
    ) {
        self.vote = vote
        request = StationRequest(query: station, timeoutNs: timeoutNs, interfaceName: interfaceName, verifier: verifier)
    }

    public var filter: DatagramFilter { request.filter }

    public var nextWakeup: LocalTime? { isFinished ? nil : request.nextWakeup }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        // An answer about this request ID answers one of this machine's datagrams.
        let queueID = vote.queueID
        let turn = request.exchange(input, at: now, sending: .requestVote(vote), what: "vote", into: &out) {
            if case .requestVoteAck(let ack) = $0.message, ack.queueID == queueID { ack } else { nil }
        }
        switch turn {
        case .waiting:
            break
        case .answered(let ack, let station):
            result = Result(
                station: station, ack: ack, attempts: request.attempts, latencyNs: now - (request.firstSend ?? now))
            isFinished = true
        case .failed(let error):
            exitError = error
            isFinished = true
        }
        return out
    }
}
