import PartyRadioCore
import PartyRadioNet

/// The result of a one-shot vote, as the DJ acknowledged it.
public struct VoteResult: Sendable {
    public var station: StationSummary
    public var ack: VoteAck
    /// The title of the track voted on, from the last snapshot seen.
    public var trackTitle: String?
    public var attempts: Int
    /// From the first vote datagram to the acknowledgement.
    public var latencyNs: Int64
}

/// `partyradio vote`: finds the station, votes on the track playing now, retries until the DJ
/// acknowledges. Retries are new datagrams of the same vote; the DJ keeps one vote per key per
/// track, so however many arrive it is counted once.
public enum VoteClient {
    public static let retryIntervalNs = Nanos.ms(200)

    public static func vote(
        _ choice: VoteChoice, station query: String?, timeoutNs: Int64, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> VoteResult? {
        let clock = settings.clock
        let deadline = clock.now() + timeoutNs
        let observer = try StationObserver(settings: settings, inbox: inbox)
        defer { observer.close() }
        guard var station = try observer.find(query, timeoutNs: timeoutNs, clock: clock) else { return nil }
        guard var trackID = station.snapshot.nowPlaying?.id else {
            throw NodeError("'\(station.name)' is not playing anything to vote on; try again when a track plays.")
        }
        guard let address = SocketAddress(station.address, port: station.port) else {
            throw NodeError("The station's address '\(station.address)' is not IPv4.")
        }
        let transport = observer.transport
        var sent: Set<UInt64> = []
        var lastSendNs: Int64 = 0
        var firstSendNs: Int64 = 0
        var restarts = 0
        let policy = SenderPolicy.station(station.id, station.advert.publicKey)
        while clock.now() < deadline {
            let now = clock.now()
            if now - lastSendNs >= retryIntervalNs {
                sent.insert(transport.send(.vote(Vote(trackID: trackID, choice: choice)), to: address, station: station.id))
                lastSendNs = now
                if firstSendNs == 0 { firstSendNs = now }
            }
            _ = waitReadable([inbox.wakeDescriptor, transport.socket.descriptor], timeoutMs: 20)
            for input in inbox.drain() { if case .quit = input { return nil } }
            for received in transport.receiveAll(policy: policy, clock: clock) {
                switch received.message {
                case .voteAck(let ack) where sent.contains(ack.voteSequence):
                    switch ack.status {
                    case .counted:
                        let title = station.snapshot.nowPlaying?.id == ack.trackID ? station.snapshot.nowPlaying?.title : nil
                        return VoteResult(
                            station: station, ack: ack, trackTitle: title, attempts: sent.count,
                            latencyNs: clock.now() - firstSendNs)
                    case .staleTrack where restarts < 3:
                        // The track changed between the snapshot and the vote: the user meant the one playing now.
                        restarts += 1
                        trackID = ack.trackID
                        station.snapshot.nowPlaying = nil
                        lastSendNs = 0
                    case .staleTrack, .noTrack:
                        throw NodeError("'\(station.name)' is between tracks; try again in a moment.")
                    }
                case .stateSnapshot(let snapshot):
                    station.snapshot = snapshot
                default:
                    break
                }
            }
        }
        throw NodeError.notFound(
            "'\(station.name)' did not acknowledge the vote within the timeout; check the network or raise --timeout.")
    }
}
