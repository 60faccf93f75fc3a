/// `partyradio chat`: finds the station and sends one chat line, retrying every 200 ms until
/// the DJ acknowledges its message ID (the DJ delivers an ID once, so retries never repeat it).
public struct ChatterMachine: NodeMachine {
    public static let retryIntervalNs = Nanos.ms(200)

    public struct Result: Sendable {
        public var station: StationSummary
        public var ack: ChatAck
        public var attempts: Int
    }

    public let send: ChatSend
    public private(set) var watch = StationWatch()
    public private(set) var filter: DatagramFilter
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private let query: String?
    private let timeoutNs: Int64
    private let interfaceName: String
    private var finder: StationFinder?
    private var station: StationSummary?
    private var attempts = 0
    private var lastSend: LocalTime?
    private var deadline = LocalTime(ns: .max / 2)

    public init(
        send: ChatSend, query: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier
    ) {
        self.send = send
        self.query = query
        self.timeoutNs = timeoutNs
        self.interfaceName = interfaceName
        filter = DatagramFilter(verifier: verifier)
    }

    public var nextWakeup: LocalTime? {
        guard !isFinished else { return nil }
        var wakeups = [deadline]
        if station != nil { wakeups.append((lastSend ?? deadline) + Self.retryIntervalNs) }
        if let watchWakeup = watch.nextWakeup { wakeups.append(watchWakeup) }
        return wakeups.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        switch input {
        case .start:
            deadline = now + timeoutNs
            finder = StationFinder(query: query, deadline: deadline, interfaceName: interfaceName)
            out.append(.browse)
        case .discovery(.failed(let message)):
            return finish(NodeError(.discovery, message), out)
        case .discovery(let event):
            _ = watch.handle(event, into: &out)
        case .datagram(let bytes, let from):
            let policy: SenderPolicy =
                if let station { .stations([station.id: station.advert.publicKey]) } else { watch.policy }
            if let inbound = filter.accept(bytes, from: from, at: now, policy: policy, logInto: &out) {
                if station == nil {
                    _ = watch.handle(inbound, now: now)
                } else if case .chatAck(let ack) = inbound.message, ack.messageID == send.messageID, let station {
                    result = Result(station: station, ack: ack, attempts: attempts)
                    isFinished = true
                    return out
                }
            }
        case .quit:
            isFinished = true
            return out
        case .timer, .command, .playerFailed, .catalog:
            break
        }
        guard !isFinished else { return out }
        _ = watch.tick(now: now, into: &out)
        if station == nil, let finder {
            switch finder.check(watch, now: now) {
            case .waiting: break
            case .failed(let error): return finish(error, out)
            case .found(let found):
                watch.isQuerying = false
                station = found
            }
        }
        guard let station else { return out }
        if now >= deadline {
            return finish(
                .notFound(
                    "'\(station.name)' did not acknowledge the chat line within the timeout; check the network or "
                        + "raise --timeout."), out)
        }
        if lastSend.map({ now - $0 >= Self.retryIntervalNs }) ?? true {
            let peer = PeerAddress(host: station.address, port: station.port)
            out.append(.send(.chatSend(send), to: .peer(peer), station: station.id))
            attempts += 1
            lastSend = now
        }
        return out
    }

    private mutating func finish(_ error: NodeError, _ out: [Effect] = []) -> [Effect] {
        exitError = error
        isFinished = true
        return out
    }
}
