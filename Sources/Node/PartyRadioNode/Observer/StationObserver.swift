import PartyRadioCore
import PartyRadioSecurity
import Synchronization

/// `partyradio stations`: an ``ObserverMachine`` on the ``NodeRuntime``, stepped by the caller
/// so that it can print as stations come and go.
public final class StationObserver {
    private let runtime: NodeRuntime<ObserverMachine>
    private let changes: ChangeCollector
    private let clock: NodeClock

    public init(settings: NodeSettings, inbox: Inbox<NodeInput> = Inbox()) throws(NodeError) {
        let interface = try settings.chooseInterface()
        // A listing needs no identity, and the guest's own key stays with its listener: each
        // process keeps its own sequence numbers, and the DJ's replay window is per key.
        let identity = Identity.generate()
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        changes = ChangeCollector(forwardingTo: settings.reporter)
        clock = settings.clock
        var settings = settings
        settings.reporter = changes
        runtime = try NodeRuntime(
            machine: ObserverMachine(verifier: settings.verifier), settings: settings, interface: interface,
            transport: transport, player: nil, inbox: inbox)
        // What this listing sees, a `listen NAME` right after may use (RecentStations).
        let recent = RecentStations(directory: settings.stateDirectory)
        runtime.afterEffects = { _, effects, now in
            for case .report(.stationsChanged(let stations, _)) in effects { recent.remember(stations, at: now) }
        }
    }

    public func close() { runtime.close() }

    /// True once the first sweep is done and every station found then answered or timed out.
    public var settled: Bool { runtime.machine.settled }

    /// Stations heard from, with their positions now.
    public func summaries() -> [StationSummary] { runtime.machine.summaries(now: clock.now()) }

    /// What this listing dropped so far, by reason (docs/PROTOCOL.md, "What receivers drop").
    public var drops: DropCounters { runtime.machine.drops }

    /// Private stations on the air that this node cannot open, by name: true where the code given
    /// does not open them, false where no code was given.
    public func lockedStations() -> [(name: String, wrongCode: Bool)] {
        runtime.machine.lockedStations.sorted { $0.key < $1.key }.map { ($0.key, $0.value == .wrongCode) }
    }

    /// Waits up to `timeoutMs` for traffic, then handles it. Returns the directory changes.
    /// Throws when Avahi fails (the daemon went away).
    public func pump(timeoutMs: Int32) throws(NodeError) -> [StationDirectory.Change] {
        runtime.step(maxWaitMs: timeoutMs)
        if let error = runtime.machine.exitError { throw error }
        return changes.take()
    }

    /// A quit, if one arrived while pumping (the observer then stops).
    public func takeOtherInputs() -> [NodeInput] {
        runtime.machine.isFinished && runtime.machine.exitError == nil ? [.quit] : []
    }
}

/// Collects the observer's directory changes for ``StationObserver/pump(timeoutMs:)``; passes
/// every other event on.
private final class ChangeCollector: NodeReporter {
    private let next: any NodeReporter
    private let changes = Mutex<[StationDirectory.Change]>([])

    init(forwardingTo next: any NodeReporter) { self.next = next }

    func report(_ event: NodeEvent) {
        if case .stationsChanged(_, let change) = event {
            changes.withLock { $0.append(change) }
        } else {
            next.report(event)
        }
    }

    func take() -> [StationDirectory.Change] {
        changes.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
    }
}
