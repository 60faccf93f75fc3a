import Glibc
import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// A listener: tunes in to a station, follows its snapshots on the multicast group, keeps the
/// DJ informed with heartbeats, and says when the station goes silent or off air.
public final class ListenerNode: @unchecked Sendable {
    private let settings: NodeSettings
    private let clock: NodeClock
    private let observer: StationObserver
    private var station: StationSummary
    private let transport: Transport
    private let groupSocket: UDPSocket
    private var djAddress: SocketAddress
    private var snapshot: StateSnapshot?
    private var lastHeardNs: Int64 = 0
    private var lastHelloNs: Int64 = 0
    private var lastHeartbeatNs: Int64 = 0
    private var lastProgressNs: Int64 = 0
    private var lastPingNs: Int64 = 0
    private var silent = false
    private var running = true
    private let playback: PlaybackSession
    private var reporter: any NodeReporter { settings.reporter }

    public static let heartbeatIntervalNs = Nanos.seconds(1)
    public static let helloRetryNs = Nanos.ms(300)
    /// No snapshot for this long and the station is reported silent (snapshots come every 0.5 s).
    public static let silenceNs = Nanos.seconds(2)
    /// How often the live view is refreshed between state changes.
    public static let progressIntervalNs = Nanos.ms(250)

    /// Finds the station (see ``StationObserver/find(_:timeoutNs:clock:)``) and joins its group.
    /// Returns nil when the user quit while it was looking.
    public static func tuneIn(
        _ query: String?, timeoutNs: Int64, playback: PlaybackOptions = PlaybackOptions(), settings: NodeSettings,
        inbox: Inbox<NodeInput>
    ) throws(NodeError) -> ListenerNode? {
        let observer = try StationObserver(settings: settings, inbox: inbox)
        guard let station = try observer.find(query, timeoutNs: timeoutNs, clock: settings.clock) else {
            observer.close()
            return nil
        }
        return try ListenerNode(station: station, observer: observer, playback: playback, settings: settings)
    }

    private init(
        station: StationSummary, observer: StationObserver, playback: PlaybackOptions, settings: NodeSettings
    ) throws(NodeError) {
        self.settings = settings
        self.playback = try PlaybackSession(role: "listener", options: playback, clock: settings.clock, inbox: observer.inbox)
        self.observer = observer
        self.station = station
        clock = settings.clock
        // A socket of its own: the observer drains its socket for the directory, and would take
        // the DJ's answers to this listener (snapshots, pongs) with it.
        transport = settings.transport(
            socket: try settings.unicastSocket(interface: observer.interface), identity: observer.transport.identity,
            stationID: station.id)
        guard let address = SocketAddress(station.address, port: station.port) else {
            throw NodeError("The station's address '\(station.address)' is not IPv4.")
        }
        djAddress = address
        let group = station.advert.group
        do {
            groupSocket = try UDPSocket()
            try groupSocket.allowAddressReuse()
            try groupSocket.bind(SocketAddress(group.addressString, port: group.port)!)
            try groupSocket.join(group, interface: observer.interface)
        } catch {
            throw NodeError("Cannot join the station's multicast group \(group): \(error); check --interface.")
        }
        observer.isQuerying = false
        snapshot = station.snapshot
        lastHeardNs = clock.now()
        self.playback.follow(station.snapshot)
        reporter.report(.tunedIn(station))
    }

    /// Runs until quit, or until the station says goodbye.
    public func run() throws(NodeError) {
        let hostName = Self.hostName()
        defer {
            observer.close()
            playback.shutdown()
        }
        while running {
            _ = waitReadable(
                [observer.inbox.wakeDescriptor, transport.socket.descriptor, groupSocket.descriptor], timeoutMs: 20)
            // Keep the observer's DNS-SD view fresh: a restarted DJ may come back on a new port.
            for change in try observer.handleReady() {
                if case .vanished(let id, _, let reason) = change, id == station.id, reason == "withdrawn" {
                    stationGone(reason: "withdrawn from the network")
                }
            }
            for input in observer.takeOtherInputs() {
                switch input {
                case .quit: running = false
                case .playerError(let message):
                    reporter.report(.warning("The player could not play the track (\(message)); retrying."))
                    playback.playerFailed()
                case .command, .avahi, .catalogResults, .catalogQueue: break
                }
            }
            if let entry = observer.directory.entries[station.id],
                let address = SocketAddress(entry.address, port: entry.port), address != djAddress
            {
                djAddress = address
                lastHelloNs = 0
            }
            let now = clock.now()
            let policy = SenderPolicy.station(station.id, station.advert.publicKey)
            for received in transport.receiveAll(from: groupSocket, policy: policy, clock: clock)
                + transport.receiveAll(policy: policy, clock: clock)
            {
                handle(received, now: now)
            }
            keepInTouch(now: now, hostName: hostName)
            if playback.djClock.nextPingDue(after: lastPingNs, now: clock.now()) {
                lastPingNs = clock.now()
                transport.send(.timePing(TimePing(clientSendNs: lastPingNs)), to: djAddress)
            }
            playback.step()
        }
        for _ in 0..<2 { transport.send(.leave(Leave()), to: djAddress) }
        reporter.report(.listenerStopped(dropped: transport.drops))
    }

    private func handle(_ received: Received, now: Int64) {
        guard running else { return }  // after a goodbye, the rest of the batch is moot
        switch received.message {
        case .stateSnapshot(let new):
            lastHeardNs = now
            if silent {
                silent = false
                reporter.report(.stationBack(name: new.stationName))
            }
            let old = snapshot
            snapshot = new
            playback.follow(new)
            let change = Self.change(from: old, to: new)
            if let change {
                lastProgressNs = now
                reporter.report(.state(new, positionNs: position(of: new, now: now), change: change))
            }
        case .goodbye(let goodbye):
            stationGone(reason: goodbye.reason)
        case .timePong(let pong):
            playback.djClock.add(
                TimeSample(t1: pong.clientSendNs, t2: pong.serverReceiveNs, t3: pong.serverSendNs, t4: received.receivedAtNs))
        default:
            break
        }
    }

    private func stationGone(reason: String) {
        reporter.report(.stationGone(name: snapshot?.stationName ?? station.name, reason: reason))
        running = false
    }

    /// Hello until the DJ has answered, heartbeats after; the silent-station warning; progress.
    private func keepInTouch(now: Int64, hostName: String) {
        let answered = lastHelloNs != 0 && lastHeardNs > lastHelloNs
        if !answered && now - lastHelloNs >= Self.helloRetryNs {
            transport.send(.hello(Hello(listenerName: hostName)), to: djAddress)
            lastHelloNs = now
            lastHeartbeatNs = now
        } else if now - lastHeartbeatNs >= Self.heartbeatIntervalNs {
            transport.send(.heartbeat(Heartbeat()), to: djAddress)
            lastHeartbeatNs = now
        }
        if !silent && now - lastHeardNs > Self.silenceNs {
            silent = true
            lastHelloNs = 0  // say hello again when it comes back
            reporter.report(.stationSilent(name: snapshot?.stationName ?? station.name))
        }
        if let snapshot, !silent, now - lastProgressNs >= Self.progressIntervalNs {
            lastProgressNs = now
            reporter.report(.state(snapshot, positionNs: position(of: snapshot, now: now), change: .progress))
        }
    }

    /// Where the station is now, by the DJ clock as estimated (our own until the estimate is ready).
    private func position(of snapshot: StateSnapshot, now: Int64) -> Int64 {
        snapshot.anchor.position(
            atDJTime: playback.djClock.djTime(local: now) ?? now,
            durationNs: snapshot.nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond })
    }

    static func change(from old: StateSnapshot?, to new: StateSnapshot) -> NodeEvent.StateChange? {
        guard let old else { return .track }
        if old.nowPlaying?.id != new.nowPlaying?.id || old.queueIndex != new.queueIndex { return .track }
        if old.anchor.isPaused != new.anchor.isPaused { return new.anchor.isPaused ? .paused : .resumed }
        if old.anchor != new.anchor { return .seek }
        if old.tally != new.tally { return .votes }
        if old.listenerCount != new.listenerCount { return .listeners }
        if old.queueLength != new.queueLength { return .queue }
        return nil
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
