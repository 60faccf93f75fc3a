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
        switch request.handle(input, at: now, into: &out) {
        case .none, .found:
            break
        case .finished(let error):
            exitError = error
            isFinished = true
        case .answer(let inbound):
            // Answers come to this process's own socket from the station's key only.
            if case .queueList(let list) = inbound.message, let station = request.station {
                result = Result(
                    station: station, list: list, attempts: request.attempts,
                    latencyNs: now - (request.firstSend ?? now))
                isFinished = true
            }
        }
        guard !isFinished else { return out }
        if let error = request.send(.query(Query()), what: "query", at: now, into: &out) {
            exitError = error
            isFinished = true
        }
        return out
    }
}
