import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// libsodium's Ed25519 check, for the machines' datagram filters.
public struct SodiumVerifier: DatagramVerifier {
    /// A private station's secret, when this node holds its code.
    public let seal: (any StationSeal)?
    /// The DJ's key, with which it makes the session keys of guests' MACs (nil: it takes none).
    let sessions: Identity?
    public init(seal: (any StationSeal)? = nil, sessions: Identity? = nil) {
        self.seal = seal
        self.sessions = sessions
    }
    public func verify(_ datagram: Datagram) -> Bool { Sodium.verify(datagram) }
    public func stationID(for key: PublicKey) -> StationID? { Sodium.stationID(for: key) }
    public func sessionKey(with peer: PublicKey) -> SessionKey? { sessions?.sessionKey(with: peer) }
    public func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool {
        Sodium.verify(datagram, sessionKey: key)
    }
}

/// The wire edge of a node: encodes, signs and sends what its machine asks; drains its sockets.
/// Owned by the node's thread alone.
final class Transport {
    /// One socket per family the node speaks, on one port.
    let sockets: UnicastSockets
    let identity: Identity
    private let clock: NodeClock
    private var sequence: UInt64
    /// Test-only fault injection: drop this share of outgoing datagrams (seeded, off by default).
    private var faults: FaultInjector?
    /// A private station's secret, if this node holds its code.
    private let seal: CodeSeal?
    /// The stations whose datagrams go out sealed: a private DJ's own, and those whose TXT record
    /// opened under the code (the machine says so with ``Effect/sealFor(_:)``).
    private(set) var sealedStations: Set<StationID> = []
    /// The keys of stations that take votes with a session MAC (``Effect/sessionFor(_:stationKey:)``),
    /// and the MAC signers made from them at the first vote.
    private var sessionStations: [StationID: PublicKey] = [:]
    private var sessionSigners: [StationID: SodiumSessionSigner] = [:]

    init(
        sockets: UnicastSockets, identity: Identity, clock: NodeClock, faults: FaultInjector?, seal: CodeSeal? = nil
    ) {
        self.seal = seal
        self.sockets = sockets
        self.identity = identity
        self.clock = clock
        self.faults = faults
        sequence = 0
    }

    /// The next sequence number: the machine's real-time clock in nanoseconds (never less than
    /// one more than the last). Every process on a machine draws from the same clock, so any
    /// number of them sharing one key (`listen`, `stations --watch`, `vote` and `chat` with one
    /// state directory) send increasing numbers between them and never look like replays of each
    /// other; a restarted process starts above everything it sent before.
    static func nextSequence(after last: UInt64, realTimeNs: Int64) -> UInt64 {
        max(last &+ 1, UInt64(max(1, realTimeNs)))
    }

    /// Sends `message` to one address.
    func send(_ message: Message, to address: SocketAddress, station: StationID) {
        send(message, to: [address], station: station)
    }

    /// Sends `message` to each of `addresses` (the same datagram: one signature, one sequence
    /// number), stamping a time ping's or pong's send time as late as possible.
    func send(_ message: Message, to addresses: [SocketAddress], station: StationID) {
        guard !addresses.isEmpty else { return }
        sequence = Self.nextSequence(after: sequence, realTimeNs: NodeClock.realTimeNs())
        var message = message
        switch message {
        case .timePing(var ping):
            ping.clientSendNs = clock.now().ns
            message = .timePing(ping)
        case .timePong(var pong):
            pong.serverSendNs = clock.now().ns
            message = .timePong(pong)
        default:
            break
        }
        let encoded =
            if message.kind.takesSessionMAC, let session = sessionSigner(for: station) {
                try? Datagram.encode(
                    message, stationID: station, sequence: sequence, session: session, fallback: identity)
            } else {
                try? Datagram.encode(message, stationID: station, sequence: sequence, signer: identity)
            }
        guard var bytes = encoded else { return }
        if let seal, sealedStations.contains(station) { bytes = seal.seal(datagram: bytes) }
        for address in addresses {
            if faults?.shouldDrop() == true { continue }
            do { try sockets.send(bytes, to: address) } catch {
                Log.debug(.wire, "send to \(address) failed: \(error)")
            }
        }
    }

    /// Votes to `station` go with the session MAC from now on (made at the first).
    func sessionFor(_ station: StationID, stationKey: PublicKey) {
        guard sessionStations[station] != stationKey else { return }
        sessionStations[station] = stationKey
        sessionSigners[station] = nil
    }

    /// The MAC signer for votes to `station`, made once (one key exchange); nil when the station
    /// takes no MACs, or its key is not usable for one (then the vote is signed).
    private func sessionSigner(for station: StationID) -> SodiumSessionSigner? {
        if let signer = sessionSigners[station] { return signer }
        guard let key = sessionStations[station], let signer = identity.sessionSigner(for: key) else { return nil }
        sessionSigners[station] = signer
        Log.debug(.wire, "votes to station \(station.hex) go with a session MAC (its advert says mac=1)")
        return signer
    }

    /// Seals what goes to `station` from now on (nothing without a code).
    func sealFor(_ station: StationID) {
        guard seal != nil else { return }
        sealedStations.insert(station)
    }

    /// What waits on `socket`, at most `limit` datagrams, as raw datagrams with their senders, each
    /// stamped with `clock` as it came off the socket (a ping's t2 and a pong's t4 are these stamps).
    ///
    /// The limit keeps a flood from starving the node's timers: datagrams that come faster than the
    /// node can drop them (a forged flood on a busy machine) would otherwise keep the socket from
    /// ever being empty, the loop would never get past the drain, and the DJ's snapshots would stop
    /// (seen: a listener 3.9 s without one under a 20,000-a-second flood). The rest waits in the
    /// socket's buffer for the next turn, which the timers get between.
    static func drain(_ socket: UDPSocket, clock: NodeClock, limit: Int = drainLimit) -> [(
        bytes: [UInt8], from: PeerAddress, at: LocalTime
    )] {
        var result: [(bytes: [UInt8], from: PeerAddress, at: LocalTime)] = []
        // The 2048-byte buffer is larger than any valid datagram (1200 bytes), so a cut one still
        // reaches the filter too long and is counted as oversized.
        while result.count < limit, let (bytes, _, from) = try? socket.receive() {
            result.append((bytes, from.peer, clock.now()))
        }
        return result
    }
}

extension Transport {
    /// Datagrams taken off one socket in one turn of the node's loop (see ``drain(_:clock:limit:)``).
    static let drainLimit = 512
}

/// Seeded outgoing-packet loss for tests of the transport itself (`PARTYRADIO_FAULT_LOSS`).
public struct FaultInjector: Sendable {
    public var lossShare: Double
    private var random: SplitMix64

    public init(lossShare: Double, seed: UInt64) {
        self.lossShare = lossShare
        random = SplitMix64(seed: seed)
    }

    mutating func shouldDrop() -> Bool { random.unit() < lossShare }
}
