/// `partyradio vote`: finds the station, votes on the track playing now, and retries until the
/// DJ acknowledges. Retries are new datagrams of the same vote; the DJ keeps one vote per key per
/// track, so however many arrive it is counted once.
public struct VoterMachine: NodeMachine {
    public static let retryIntervalNs = StationRequest.retryIntervalNs

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

    public let choice: VoteChoice
    public private(set) var request: StationRequest
    public private(set) var result: Result?
    public private(set) var isFinished = false
    public private(set) var exitError: NodeError?
    private var trackID: String?
    private var restarts = 0

    public init(
        choice: VoteChoice, query: String?, timeoutNs: Int64, interfaceName: String, verifier: any DatagramVerifier
    ) {
        self.choice = choice
        request = StationRequest(query: query, timeoutNs: timeoutNs, interfaceName: interfaceName, verifier: verifier)
    }

    public var watch: StationWatch { request.watch }
    public var filter: DatagramFilter { request.filter }
    public var nextWakeup: LocalTime? { isFinished ? nil : request.nextWakeup }

    public mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
        guard !isFinished else { return [] }
        var out: [Effect] = []
        switch request.handle(input, at: now, into: &out) {
        case .none:
            break
        case .finished(let error):
            finish(error)
        case .found(let station):
            trackID = station.snapshot.nowPlaying?.id
            if trackID == nil {
                finish(
                    NodeError(
                        .refused, "'\(station.name)' is not playing anything to vote on; try again when a track plays.")
                )
            }
        case .answer(let inbound):
            handle(inbound, now: now)
        }
        guard !isFinished, let trackID else { return out }
        if let error = request.send(.vote(Vote(trackID: trackID, choice: choice)), what: "vote", at: now, into: &out) {
            finish(error)
        }
        return out
    }

    private mutating func handle(_ inbound: Inbound, now: LocalTime) {
        guard let station = request.station else { return }
        switch inbound.message {
        // Acks come back to the address the votes came from, a socket of this process alone, so
        // every ack heard answers one of this machine's votes.
        case .voteAck(let ack):
            switch ack.status {
            case .counted:
                let playing = station.snapshot.nowPlaying
                result = Result(
                    station: station, ack: ack, trackTitle: playing?.id == ack.trackID ? playing?.title : nil,
                    attempts: request.attempts, latencyNs: now - (request.firstSend ?? now))
                isFinished = true
            case .staleTrack where restarts < 3:
                // The track changed between the snapshot and the vote: the user meant the one playing now.
                restarts += 1
                trackID = ack.trackID
                request.resendNow()
            case .staleTrack, .noTrack:
                finish(NodeError(.refused, "'\(station.name)' is between tracks; try again in a moment."))
            case .addressLimit:
                finish(
                    NodeError(
                        .refused,
                        "Not counted: another guest on this machine's address has voted on this track already "
                            + "(one guest, one vote; the DJ can allow more with --voters-per-address)."))
            }
        case .stateSnapshot(let snapshot):
            request.heard(snapshot)
        default:
            break
        }
    }

    private mutating func finish(_ error: NodeError?) {
        exitError = error
        isFinished = true
    }
}
