/// One thing a guest asks a station once: what to send, which answer is its own, and how often
/// to send again while none comes. ``GuestExchange`` runs one as a whole command (`vote`, `chat`,
/// `request`, `queue`, `vote --request`); ``Retry`` is the loop it and a listener's vote share.
public protocol StationRequest: Sendable {
    /// What the command hands back once the station answered.
    associatedtype Answer: Sendable

    /// What to send now; nil while there is nothing to send (a catalog search runs).
    var message: Message? { get }
    /// How long after a datagram the same one goes again, while no answer came.
    var retryIntervalNs: Int64 { get }
    /// Reads what the station sent: this request's answer, a change to the request (sent at
    /// once), a failure, or nothing of its own.
    mutating func read(_ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect])
        -> Reading<Answer>
    /// The command starts: the effects to run first (a catalog search).
    mutating func begin(at now: LocalTime, into out: inout [Effect])
    /// The station was found: nil to go on, or why there is nothing to ask it (nothing plays).
    mutating func found(_ station: StationSummary) -> NodeError?
    /// An input that is not the station's (the catalog's answer to this node's search).
    mutating func take(_ input: NodeInput, into out: inout [Effect]) -> Reading<Answer>
    /// Why it ended at the deadline without an answer.
    func timedOut(at station: StationSummary) -> NodeError
}

/// What a message (or an input) came to for a ``StationRequest``.
public enum Reading<Answer: Sendable>: Sendable {
    /// Not this request's answer: ignored.
    case ignored
    /// The answer.
    case answered(Answer)
    /// The request changed (another track, another request ID): it is sent again at once.
    case changed
    /// It cannot go on.
    case failed(NodeError)
}

extension StationRequest {
    public var retryIntervalNs: Int64 { Nanos.ms(200) }

    public mutating func begin(at now: LocalTime, into out: inout [Effect]) {}

    public mutating func found(_ station: StationSummary) -> NodeError? { nil }

    public mutating func take(_ input: NodeInput, into out: inout [Effect]) -> Reading<Answer> { .ignored }

    /// "'Rooftop' did not acknowledge the `what` within the timeout; …"
    func unacknowledged(_ what: String, at station: StationSummary) -> NodeError {
        .notFound(
            "'\(station.name)' did not acknowledge the \(what) within the timeout; check the network or raise "
                + "--timeout.")
    }
}
