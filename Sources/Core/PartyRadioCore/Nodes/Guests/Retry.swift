/// One request sent again on its schedule until its answer comes or the deadline passes: the
/// retry loop of the guests' one-shot commands (``GuestExchange``) and of a listener's vote. It
/// says when to send; the request says what, and which answer is its own.
public struct Retry<Request: StationRequest>: Sendable {
    /// What to do at an instant.
    public enum Due: Sendable, Equatable {
        /// Nothing yet.
        case wait
        /// Send this datagram now.
        case send(Message)
        /// The deadline passed without an answer.
        case expired
    }

    public private(set) var request: Request
    /// When it gives up.
    public var deadline: LocalTime
    /// Datagrams sent so far, the request's changes included.
    public private(set) var attempts = 0
    /// When the first datagram of the request as it is now went (a change starts it again).
    public private(set) var firstSent: LocalTime?
    private var lastSent: LocalTime?

    public init(_ request: Request, deadline: LocalTime) {
        self.request = request
        self.deadline = deadline
    }

    /// The datagram due at `now` (the first at once, then one every retry interval), or
    /// ``Due/expired`` from the deadline on.
    public mutating func due(at now: LocalTime) -> Due {
        guard now < deadline else { return .expired }
        guard let message = request.message,
            lastSent.map({ now - $0 >= request.retryIntervalNs }) ?? true
        else { return .wait }
        attempts += 1
        lastSent = now
        if firstSent == nil { firstSent = now }
        return .send(message)
    }

    /// Sends again at the next ``due(at:)``: the station dropped the last one for want of the
    /// admission cookie it has just given.
    public mutating func again() { lastSent = nil }

    /// The deadline, or the next resend if that comes first.
    public var nextWakeup: LocalTime {
        guard request.message != nil, let lastSent else { return deadline }
        return min(deadline, lastSent + request.retryIntervalNs)
    }

    /// Reads what the station sent with the request; a changed request is due again at once.
    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<Request.Answer> {
        restarting(request.read(message, from: station, at: now, into: &out))
    }

    /// Hands the request an input that is not the station's (the catalog's answer).
    public mutating func take(_ input: NodeInput, into out: inout [Effect]) -> Reading<Request.Answer> {
        restarting(request.take(input, into: &out))
    }

    public mutating func begin(at now: LocalTime, into out: inout [Effect]) { request.begin(at: now, into: &out) }

    public mutating func found(_ station: StationSummary) -> NodeError? { request.found(station) }

    private mutating func restarting(_ reading: Reading<Request.Answer>) -> Reading<Request.Answer> {
        if case .changed = reading {
            lastSent = nil
            firstSent = nil
        }
        return reading
    }
}
