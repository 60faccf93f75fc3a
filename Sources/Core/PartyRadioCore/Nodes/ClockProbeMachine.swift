/// `partyradio doctor`'s clock check: looks for a station on the air (a bounded wait), then sends it a
/// few time pings and measures this machine's clock against the station's. The pongs also prove
/// that unicast UDP gets through both machines' firewalls, so the firewall check reads the outcome
/// too.
public struct ClockProbeMachine: NodeMachine {
    public struct Configuration: Sendable {
        /// How long to look for a station that answers.
        public var lookNs: Int64 = Nanos.ms(2500)
        /// How many pongs make a measurement.
        public var samples = 8
        /// Time between pings.
        public var pingIntervalNs: Int64 = Nanos.ms(40)
        /// How long to ping before giving up on the missing pongs.
        public var pingNs: Int64 = Nanos.ms(1500)

        public init() {}
    }

    /// What was found.
    public enum Outcome: Equatable, Sendable {
        /// No station was announced within the wait.
        case noStation
        /// A station was announced but never answered a unicast query.
        case silent(Station)
        /// A station answered a query but no time ping (`sent` of them).
        case noPong(Station, sent: Int)
        /// The clocks, measured.
        case measured(Station, ClockReading)
        /// Discovery failed (avahi-daemon went away).
        case failed(String)
    }

    /// The station that was probed.
    public struct Station: Equatable, Sendable {
        public var name: String
        public var address: PeerAddress

        public init(name: String, address: PeerAddress) {
            self.name = name
            self.address = address
        }
    }

    public private(set) var outcome: Outcome?
    public var isFinished: Bool { outcome != nil }
    public var exitError: NodeError? { nil }

    private let configuration: Configuration
    private var watch: StationWatch
    private var filter: DatagramFilter
    private var lookDeadline: LocalTime?
    private var target: (id: StationID, station: Station, deadline: LocalTime)?
    private var lastPing: LocalTime?
    private var sent = 0
    private var samples: [TimeSample] = []

    public init(configuration: Configuration = Configuration(), verifier: any DatagramVerifier) {
        self.configuration = configuration
        filter = DatagramFilter(verifier: verifier)
        watch = StationWatch(verifier: verifier)
    }

    public var nextWakeup: LocalTime? {
        guard outcome == nil, let lookDeadline else { return nil }
        if let target {
            return min(target.deadline, (lastPing ?? target.deadline) + configuration.pingIntervalNs)
        }
        return [lookDeadline, watch.nextWakeup].compactMap { $0 }.min()
    }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard outcome == nil else { return [] }
        var out: [Effect] = []
        switch input {
        case .start:
            lookDeadline = now + configuration.lookNs
            out.append(.browse(resolving: nil))
        case .discovery(.failed(let message)):
            outcome = .failed(message)
            return out
        case .discovery(let event):
            _ = watch.handle(event, into: &out)
        case .datagram(let bytes, let from, _):
            guard let inbound = filter.accept(bytes, from: from, at: now, policy: watch.policy, logInto: &out) else {
                break
            }
            if let target, inbound.stationID == target.id, case .timePong(let pong) = inbound.message {
                let sample = TimeSample(
                    t1: LocalTime(ns: pong.clientSendNs), t2: DJTime(ns: pong.serverReceiveNs),
                    t3: DJTime(ns: pong.serverSendNs), t4: inbound.receivedAt)
                if sample.isPlausible { samples.append(sample) }
            } else {
                _ = watch.handle(inbound, now: now)
            }
        case .quit:
            outcome = .noStation
            return out
        case .timer, .djControl, .listenerControl, .libraryRescanned, .playerFailed, .catalog, .web, .webSearch,
            .webDJControl, .live, .output:
            break
        }
        if target == nil { look(now: now, into: &out) }
        if let target { ping(target, now: now, into: &out) }
        return out
    }

    /// Picks the first station that answered; gives up at the deadline, or once DNS-SD's first
    /// sweep is done and nothing is announced or nothing announced answers.
    private mutating func look(now: LocalTime, into out: inout [Effect]) {
        _ = watch.tick(now: now, into: &out)
        if let first = watch.summaries(now: now).min(by: { $0.name < $1.name }) {
            watch.isQuerying = false
            target = (
                first.id, Station(name: first.name, address: PeerAddress(host: first.address, port: first.port)),
                now + configuration.pingNs
            )
            return
        }
        guard let lookDeadline, now >= lookDeadline || watch.settled else { return }
        if let entry = watch.directory.entries.values.min(by: { $0.serviceName < $1.serviceName }) {
            outcome = .silent(
                Station(name: entry.serviceName, address: PeerAddress(host: entry.address, port: entry.port)))
        } else {
            outcome = .noStation
        }
    }

    private mutating func ping(
        _ target: (id: StationID, station: Station, deadline: LocalTime), now: LocalTime, into out: inout [Effect]
    ) {
        if samples.count >= configuration.samples || now >= target.deadline {
            outcome =
                if let reading = ClockReading(samples: samples, sent: sent) {
                    .measured(target.station, reading)
                } else {
                    .noPong(target.station, sent: sent)
                }
            return
        }
        guard lastPing.map({ now - $0 >= configuration.pingIntervalNs }) ?? true else { return }
        // t1 is stamped by the runtime as the datagram leaves.
        out.append(
            .send(.timePing(TimePing(clientSendNs: now.ns)), to: .peer(target.station.address), station: target.id))
        lastPing = now
        sent += 1
    }
}

/// This machine's clock against a station's, from a handful of time pings.
public struct ClockReading: Equatable, Sendable {
    /// The station's clock minus this machine's (positive: this machine is behind).
    public var offsetNs: Int64
    /// The fastest round trip, and the median one.
    public var minRoundTripNs: Int64
    public var medianRoundTripNs: Int64
    /// Pongs that came back, of pings sent.
    public var received: Int
    public var sent: Int

    public init(offsetNs: Int64, minRoundTripNs: Int64, medianRoundTripNs: Int64, received: Int, sent: Int) {
        self.offsetNs = offsetNs
        self.minRoundTripNs = minRoundTripNs
        self.medianRoundTripNs = medianRoundTripNs
        self.received = received
        self.sent = sent
    }

    /// The reading of `samples` through the listener's own filter (``ClockSync``); nil without any.
    public init?(samples: [TimeSample], sent: Int) {
        var sync = ClockSync()
        for sample in samples { sync.add(sample) }
        guard let newest = sync.samples.last, let offset = sync.offset(at: LocalTime(ns: newest.midpointNs)) else {
            return nil
        }
        let delays = samples.map(\.delayNs).sorted()
        self.init(
            offsetNs: offset, minRoundTripNs: delays[0], medianRoundTripNs: delays[delays.count / 2],
            received: samples.count, sent: max(sent, samples.count))
    }
}
