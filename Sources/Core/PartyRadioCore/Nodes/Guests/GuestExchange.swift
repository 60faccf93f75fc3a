/// A guest's one-shot command as a machine: find the station the user meant, send it one
/// ``StationRequest`` on the request's schedule until the station answers it, or the timeout.
/// `vote`, `vote --request`, `chat`, `request` and `queue` are this machine over their request.
/// Answers come to this process's own socket from the station's key only.
public struct GuestExchange<Request: StationRequest>: NodeMachine {
    /// The station's answer, and how it came.
    public struct Answered: Sendable {
        /// The station, with the latest snapshot heard while asking.
        public var station: StationSummary
        public var answer: Request.Answer
        /// Datagrams sent in all.
        public var attempts: Int
        /// From the first datagram of the request answered to its answer.
        public var latencyNs: Int64
    }

    public private(set) var watch: StationWatch
    public private(set) var filter: DatagramFilter
    /// The station, once found.
    public private(set) var station: StationSummary?
    public private(set) var retry: Retry<Request>
    public private(set) var result: Answered?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private let query: String?
    private let timeoutNs: Int64
    private let interfaceName: String
    private var finder: StationFinder?
    /// The keys this state directory met before: a station that shows another is refused.
    private let pins: KeyPins

    /// - Parameters:
    ///   - query: the station the user named (nil: the only one there is).
    ///   - pins: the keys station names showed before (`known_stations`), checked as `listen` does.
    public init(
        _ request: Request, station query: String?, timeoutNs: Int64, interfaceName: String,
        verifier: any DatagramVerifier, pins: KeyPins = KeyPins()
    ) {
        self.pins = pins
        self.query = query
        self.timeoutNs = timeoutNs
        self.interfaceName = interfaceName
        filter = DatagramFilter(verifier: verifier)
        watch = StationWatch(verifier: verifier)
        retry = Retry(request, deadline: LocalTime(ns: .max / 2))
    }

    public var request: Request { retry.request }

    public var nextWakeup: LocalTime? {
        guard !isFinished else { return nil }
        return [retry.nextWakeup, watch.nextWakeup].compactMap { $0 }.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        switch input {
        case .start:
            retry.deadline = now + timeoutNs
            finder = StationFinder(query: query, deadline: retry.deadline, interfaceName: interfaceName)
            retry.begin(at: now, into: &out)
            out.append(.browse(resolving: query))
        case .discovery(.failed(let message)):
            finish(NodeError(.discovery, message))
        case .discovery(let event):
            _ = watch.handle(event, into: &out)
        case .datagram(let bytes, let from, _):
            let policy: SenderPolicy =
                if let station { SenderPolicy.pinned(station.id, station.advert) } else { watch.policy }
            let challenges = filter.challengesTaken
            guard let inbound = filter.accept(bytes, from: from, at: now, policy: policy, logInto: &out) else {
                // The station is busy and dropped what was sent for want of a cookie it has just
                // given: send again at once, with it, rather than at the next retry.
                if filter.challengesTaken > challenges {
                    if station == nil { watch.queryAgainNow() } else { retry.again() }
                }
                break
            }
            guard var station else {
                _ = watch.handle(inbound, now: now)
                break
            }
            if case .stateSnapshot(let snapshot) = inbound.message {
                station.snapshot = snapshot
                self.station = station
            }
            read(retry.read(inbound.message, from: station, at: now, into: &out), now: now)
        case .catalog:
            read(retry.take(input, into: &out), now: now)
        case .quit:
            finish(nil)
        case .timer, .djControl, .listenerControl, .libraryRescanned, .playerFailed, .web, .webSearch, .webDJControl,
            .live, .output:
            break
        }
        guard !isFinished else { return out }
        _ = watch.tick(now: now, into: &out)
        if station == nil, let finder {
            switch finder.check(watch, now: now) {
            case .waiting:
                break
            case .failed(let error):
                finish(error)
            case .found(let found):
                watch.isQuerying = false
                station = found
                if let refusal = pins.check(found, into: &out) {
                    finish(refusal)
                } else if let refusal = retry.found(found) {
                    finish(refusal)
                }
            }
        }
        guard !isFinished, let station else { return out }
        switch retry.due(at: now) {
        case .wait:
            break
        case .send(let message):
            out.append(
                .send(message, to: .peer(PeerAddress(host: station.address, port: station.port)), station: station.id))
        case .expired:
            finish(retry.request.timedOut(at: station))
        }
        return out
    }

    private mutating func read(_ reading: Reading<Request.Answer>, now: LocalTime) {
        switch reading {
        case .ignored, .changed:
            break
        case .answered(let answer):
            guard let station else { return }
            result = Answered(
                station: station, answer: answer, attempts: retry.attempts,
                latencyNs: now - (retry.firstSent ?? now))
            isFinished = true
        case .failed(let error):
            finish(error)
        }
    }

    private mutating func finish(_ error: NodeError?) {
        exitError = error
        isFinished = true
    }
}
