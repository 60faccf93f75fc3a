/// What the one-shot commands (`vote`, `chat`) have in common: look for the station the user
/// meant, then send one request every ``retryIntervalNs`` until the DJ answers or time runs out.
/// A component: the machine says what to send and reads the answers.
public struct StationRequest: Sendable {
    public static let retryIntervalNs = Nanos.ms(200)

    /// What one input came to.
    public enum Step: Sendable {
        /// Nothing for the machine to do.
        case none
        /// A verified datagram from the station found, for the machine to read.
        case answer(Inbound)
        /// The station was just found: the machine may refuse it (nothing to vote on, say).
        case found(StationSummary)
        /// Looking failed (not found, ambiguous, Avahi gone), or the user quit (nil).
        case finished(NodeError?)
    }

    public private(set) var watch = StationWatch()
    public private(set) var filter: DatagramFilter
    /// The station, once found.
    public private(set) var station: StationSummary?
    /// Datagrams sent so far.
    public private(set) var attempts = 0
    public private(set) var firstSend: LocalTime?
    private var lastSend: LocalTime?
    private let query: String?
    private let timeoutNs: Int64
    private let interfaceName: String
    private var finder: StationFinder?
    private(set) var deadline = LocalTime(ns: .max / 2)

    public init(query: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier) {
        self.query = query
        self.timeoutNs = timeoutNs
        self.interfaceName = interfaceName
        filter = DatagramFilter(verifier: verifier)
        watch = StationWatch(verifier: verifier)
    }

    public var nextWakeup: LocalTime? {
        var wakeups = [deadline]
        if station != nil { wakeups.append((lastSend ?? deadline) + Self.retryIntervalNs) }
        if let watchWakeup = watch.nextWakeup { wakeups.append(watchWakeup) }
        return wakeups.min()
    }

    /// Handles one input: discovery, datagrams, the search for the station.
    public mutating func handle(_ input: NodeInput, at now: LocalTime, into out: inout [Effect]) -> Step {
        var step = Step.none
        switch input {
        case .start:
            deadline = now + timeoutNs
            finder = StationFinder(query: query, deadline: deadline, interfaceName: interfaceName)
            out.append(.browse(resolving: query))
        case .discovery(.failed(let message)):
            return .finished(NodeError(.discovery, message))
        case .discovery(let event):
            _ = watch.handle(event, into: &out)
        case .datagram(let bytes, let from):
            let policy: SenderPolicy =
                if let station { .stations([station.id: station.advert.publicKey]) } else { watch.policy }
            if let inbound = filter.accept(bytes, from: from, at: now, policy: policy, logInto: &out) {
                if station == nil { _ = watch.handle(inbound, now: now) } else { step = .answer(inbound) }
            }
        case .quit:
            return .finished(nil)
        case .timer, .djControl, .listenerControl, .libraryRescanned, .playerFailed, .catalog, .web, .webSearch:
            break
        }
        _ = watch.tick(now: now, into: &out)
        if station == nil, let finder {
            switch finder.check(watch, now: now) {
            case .waiting: break
            case .failed(let error): return .finished(error)
            case .found(let found):
                watch.isQuerying = false
                station = found
                return .found(found)
            }
        }
        return step
    }

    /// Sends `message` to the station when a retry is due; nil, or the timeout error (`what`
    /// names the request in it) once the deadline has passed.
    public mutating func send(_ message: Message, what: String, at now: LocalTime, into out: inout [Effect])
        -> NodeError?
    {
        guard let station else { return nil }
        if now >= deadline {
            return .notFound(
                "'\(station.name)' did not acknowledge the \(what) within the timeout; check the network or raise "
                    + "--timeout.")
        }
        guard lastSend.map({ now - $0 >= Self.retryIntervalNs }) ?? true else { return nil }
        out.append(
            .send(message, to: .peer(PeerAddress(host: station.address, port: station.port)), station: station.id))
        attempts += 1
        lastSend = now
        if firstSend == nil { firstSend = now }
        return nil
    }

    /// One turn of a command that asks once and waits: how ``exchange(_:at:sending:what:into:answer:)`` went.
    public enum Turn<Answer> {
        /// Still asking (the datagram is resent every ``retryIntervalNs``).
        case waiting
        /// The station answered, and `answer` took it.
        case answered(Answer, from: StationSummary)
        /// It ended without an answer: not found, timed out, quit (nil: no error).
        case failed(NodeError?)
    }

    /// Handles `input` and, until `answer` takes an inbound datagram, sends `message` to the station
    /// every retry: the whole loop of a one-shot guest command (chat, queue, a vote on a request).
    /// Answers come to this process's own socket from the station's key only.
    public mutating func exchange<Answer>(
        _ input: NodeInput, at now: LocalTime, sending message: Message, what: String, into out: inout [Effect],
        answer: (Inbound) -> Answer?
    ) -> Turn<Answer> {
        switch handle(input, at: now, into: &out) {
        case .none, .found:
            break
        case .finished(let error):
            return .failed(error)
        case .answer(let inbound):
            if let taken = answer(inbound), let station { return .answered(taken, from: station) }
        }
        if let error = send(message, what: what, at: now, into: &out) { return .failed(error) }
        return .waiting
    }

    /// Sends again at once on the next ``send(_:what:at:into:)`` (the request changed).
    public mutating func resendNow() { lastSend = nil }

    /// The station's latest snapshot, as heard while asking.
    public mutating func heard(_ snapshot: StateSnapshot) { station?.snapshot = snapshot }
}
