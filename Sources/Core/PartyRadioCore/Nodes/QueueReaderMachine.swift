/// `partyradio queue`: finds the station and asks what plays next, retrying every 200 ms until
/// the DJ's list comes (the DJ answers a query with its listener list, what plays next and its
/// snapshot).
public struct QueueReaderMachine: NodeMachine {
    public struct Result: Sendable {
        public var station: StationSummary
        public var list: QueueList
        public var attempts: Int
        /// From the first query to the list.
        public var latencyNs: Int64
    }

    public private(set) var request: StationRequest
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?

    public init(station: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier) {
        request = StationRequest(query: station, timeoutNs: timeoutNs, interfaceName: interfaceName, verifier: verifier)
    }

    public var filter: DatagramFilter { request.filter }

    public var nextWakeup: LocalTime? { isFinished ? nil : request.nextWakeup }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        let turn = request.exchange(input, at: now, sending: .query(Query()), what: "query", into: &out) {
            if case .queueList(let list) = $0.message { list } else { nil }
        }
        switch turn {
        case .waiting:
            break
        case .answered(let list, let station):
            result = Result(
                station: station, list: list, attempts: request.attempts, latencyNs: now - (request.firstSend ?? now))
            isFinished = true
        case .failed(let error):
            exitError = error
            isFinished = true
        }
        return out
    }
}
