/// `partyradio stations`: watches the stations on the network and reports every change.
public struct ObserverMachine: NodeMachine {
    public private(set) var watch = StationWatch()
    public private(set) var filter: DatagramFilter
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private var started = false
    private var lastNow = LocalTime(ns: 0)

    public init(verifier: any DatagramVerifier) {
        filter = DatagramFilter(verifier: verifier)
        watch = StationWatch(verifier: verifier)
    }

    /// True once the first sweep is done and every station found then answered or timed out.
    public var settled: Bool { watch.settled }

    public var nextWakeup: LocalTime? { started && !isFinished ? watch.nextWakeup : nil }

    public func summaries(now: LocalTime) -> [StationSummary] { watch.summaries(now: now) }

    /// What this node dropped so far, by reason: datagrams, adverts and records of a DNS domain.
    public var drops: DropCounters { filter.drops.merged(with: watch.drops) }

    /// Private stations this node cannot open (no code, or not theirs), by service name.
    public var lockedStations: [String: StationWatch.Lock] { watch.lockedStations }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        lastNow = now
        var out: [Effect] = []
        var changes: [StationDirectory.Change] = []
        switch input {
        case .start:
            started = true
            out.append(.browse(resolving: nil))
        case .discovery(.failed(let message)):
            exitError = NodeError(.discovery, message)
            isFinished = true
            return out
        case .discovery(let event):
            changes += watch.handle(event, into: &out)
        case .datagram(let bytes, let from, _):
            if let inbound = filter.accept(bytes, from: from, at: now, policy: watch.policy, logInto: &out) {
                changes += watch.handle(inbound, now: now)
            }
        case .quit:
            isFinished = true
            return out
        case .timer, .djControl, .listenerControl, .libraryRescanned, .playerFailed, .catalog, .web, .webSearch,
            .webDJControl, .live, .output:
            break
        }
        changes += watch.tick(now: now, into: &out)
        let summaries = watch.summaries(now: now)
        for change in changes { out.append(.report(.stationsChanged(summaries, change: change))) }
        return out
    }
}
