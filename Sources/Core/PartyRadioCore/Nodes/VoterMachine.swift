/// `partyradio vote`: finds the station, votes on the track playing now, and retries until the
/// DJ acknowledges. Retries are new datagrams of the same vote; the DJ keeps one vote per key per
/// track, so however many arrive it is counted once.
public struct VoterMachine: NodeMachine {
    public static let retryIntervalNs = Nanos.ms(200)

    /// The vote as the DJ acknowledged it.
    public struct Result: Sendable {
        public var station: StationSummary
        public var ack: VoteAck
        /// The title of the track voted on, from the last snapshot seen.
        public var trackTitle: String?
        public var attempts: Int
        /// From the first vote datagram to the acknowledgement.
        public var latencyNs: Int64
    }

    private struct Voting: Sendable {
        var station: StationSummary
        var trackID: String
        var attempts = 0
        var lastSend: LocalTime?
        var firstSend: LocalTime?
        var restarts = 0
    }

    public let choice: VoteChoice
    public private(set) var watch = StationWatch()
    public private(set) var filter: DatagramFilter
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private let query: String?
    private let timeoutNs: Int64
    private let interfaceName: String
    private var finder: StationFinder?
    private var voting: Voting?
    private var deadline = LocalTime(ns: .max / 2)

    public init(
        choice: VoteChoice, query: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier
    ) {
        self.choice = choice
        self.query = query
        self.timeoutNs = timeoutNs
        self.interfaceName = interfaceName
        filter = DatagramFilter(verifier: verifier)
    }

    public var nextWakeup: LocalTime? {
        guard !isFinished else { return nil }
        var wakeups = [deadline]
        if let voting { wakeups.append((voting.lastSend ?? deadline) + Self.retryIntervalNs) }
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
            finish(NodeError(.discovery, message))
            return out
        case .discovery(let event):
            _ = watch.handle(event, into: &out)
        case .datagram(let bytes, let from):
            let policy: SenderPolicy =
                if let voting { .stations([voting.station.id: voting.station.advert.publicKey]) } else { watch.policy }
            if let inbound = filter.accept(bytes, from: from, at: now, policy: policy, logInto: &out) {
                if voting == nil { _ = watch.handle(inbound, now: now) } else { handle(inbound, now: now) }
            }
        case .quit:
            isFinished = true
            return out
        case .timer, .command, .playerFailed, .catalog:
            break
        }
        guard !isFinished else { return out }
        _ = watch.tick(now: now, into: &out)
        if voting == nil, let finder {
            switch finder.check(watch, now: now) {
            case .waiting: break
            case .failed(let error): finish(error)
            case .found(let station): startVoting(station)
            }
        }
        guard var voting, !isFinished else { return out }
        if now >= deadline {
            finish(
                .notFound(
                    "'\(voting.station.name)' did not acknowledge the vote within the timeout; check the network or "
                        + "raise --timeout."))
            return out
        }
        if voting.lastSend.map({ now - $0 >= Self.retryIntervalNs }) ?? true {
            let peer = PeerAddress(host: voting.station.address, port: voting.station.port)
            out.append(
                .send(.vote(Vote(trackID: voting.trackID, choice: choice)), to: .peer(peer), station: voting.station.id)
            )
            voting.attempts += 1
            voting.lastSend = now
            if voting.firstSend == nil { voting.firstSend = now }
        }
        self.voting = voting
        return out
    }

    private mutating func startVoting(_ station: StationSummary) {
        watch.isQuerying = false
        guard let trackID = station.snapshot.nowPlaying?.id else {
            return finish(
                NodeError(
                    .refused, "'\(station.name)' is not playing anything to vote on; try again when a track plays."))
        }
        voting = Voting(station: station, trackID: trackID)
    }

    private mutating func handle(_ inbound: Inbound, now: LocalTime) {
        guard var voting else { return }
        switch inbound.message {
        // Acks come back to the address the votes came from, a socket of this process alone, so
        // every ack heard answers one of this machine's votes.
        case .voteAck(let ack):
            switch ack.status {
            case .counted:
                let playing = voting.station.snapshot.nowPlaying
                result = Result(
                    station: voting.station, ack: ack, trackTitle: playing?.id == ack.trackID ? playing?.title : nil,
                    attempts: voting.attempts, latencyNs: now - (voting.firstSend ?? now))
                isFinished = true
            case .staleTrack where voting.restarts < 3:
                // The track changed between the snapshot and the vote: the user meant the one playing now.
                voting.restarts += 1
                voting.trackID = ack.trackID
                voting.station.snapshot.nowPlaying = nil
                voting.lastSend = nil
            case .staleTrack, .noTrack:
                finish(NodeError(.refused, "'\(voting.station.name)' is between tracks; try again in a moment."))
                return
            }
        case .stateSnapshot(let snapshot):
            voting.station.snapshot = snapshot
        default:
            break
        }
        if !isFinished { self.voting = voting }
    }

    private mutating func finish(_ error: NodeError) {
        exitError = error
        isFinished = true
    }
}
