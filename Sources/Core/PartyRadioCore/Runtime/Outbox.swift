/// What a node sends, made ready for the wire: a time ping or pong stamped, the next sequence
/// number, the signature (or a vote's session MAC), and the seal of a private station. Pure: the
/// keys come in as a ``Signer`` and a maker of ``SessionSigner``s (libsodium on real nodes, keyed
/// checksums in the simulator), the instants from the caller; the driver (``NodeDriver``) asks it
/// for every ``Effect/send(_:to:station:)`` and hands the bytes to its datagram port.
public struct Outbox {
    /// This node's key: what it signs with.
    public let signer: any Signer
    /// Makes the MAC signer for votes to a station that takes them, from its key (nil: the key is
    /// not usable for one, and votes are signed).
    private let makeSessionSigner: (PublicKey) -> (any SessionSigner)?
    /// A private station's secret, if this node holds its code.
    private let seal: (any StationSeal)?
    /// The last sequence number sent.
    public private(set) var sequence: UInt64 = 0
    /// The stations whose datagrams go out sealed: a private DJ's own, and those whose TXT record
    /// opened under the code (``Effect/sealFor(_:)``).
    public private(set) var sealedStations: Set<StationID> = []
    /// The keys of stations that take votes with a session MAC
    /// (``Effect/sessionFor(_:stationKey:)``), and the MAC signers made from them at the first vote.
    private var sessionStations: [StationID: PublicKey] = [:]
    private var sessionSigners: [StationID: any SessionSigner] = [:]

    public init(
        signer: any Signer, seal: (any StationSeal)? = nil,
        sessionSigner: @escaping (PublicKey) -> (any SessionSigner)? = { _ in nil }
    ) {
        self.signer = signer
        self.seal = seal
        makeSessionSigner = sessionSigner
    }

    /// The next sequence number: the machine's real-time clock in nanoseconds (never less than
    /// one more than the last). Every process on a machine draws from the same clock, so any
    /// number of them sharing one key (`listen`, `stations --watch`, `vote` and `chat` with one
    /// state directory) send increasing numbers between them and never look like replays of each
    /// other; a restarted process starts above everything it sent before.
    public static func nextSequence(after last: UInt64, realTimeNs: Int64) -> UInt64 {
        max(last &+ 1, UInt64(max(1, realTimeNs)))
    }

    /// `message` to `station` as the bytes to send (one datagram, whatever number of addresses it
    /// goes to), or nil if it cannot be encoded.
    /// - Parameters:
    ///   - now: this node's clock as late as possible before sending: a time ping's t1 and a
    ///     pong's t3.
    ///   - realTimeNs: the machine's real-time clock, which the sequence number follows.
    public mutating func datagram(
        for message: Message, station: StationID, now: LocalTime, realTimeNs: Int64
    ) -> [UInt8]? {
        sequence = Self.nextSequence(after: sequence, realTimeNs: realTimeNs)
        var message = message
        switch message {
        case .timePing(var ping):
            ping.clientSendNs = now.ns
            message = .timePing(ping)
        case .timePong(var pong):
            pong.serverSendNs = now.ns
            message = .timePong(pong)
        default:
            break
        }
        let encoded =
            if message.kind.takesSessionMAC, let session = sessionSigner(for: station) {
                try? Datagram.encode(
                    message, stationID: station, sequence: sequence, session: session, fallback: signer)
            } else {
                try? Datagram.encode(message, stationID: station, sequence: sequence, signer: signer)
            }
        guard let bytes = encoded else { return nil }
        if let seal, sealedStations.contains(station) { return seal.seal(datagram: bytes) }
        return bytes
    }

    /// Votes to `station` go with the session MAC from now on (made at the first).
    public mutating func sessionFor(_ station: StationID, stationKey: PublicKey) {
        guard sessionStations[station] != stationKey else { return }
        sessionStations[station] = stationKey
        sessionSigners[station] = nil
    }

    /// The MAC signer for votes to `station`, made once (one key exchange); nil when the station
    /// takes no MACs, or its key is not usable for one (then the vote is signed).
    private mutating func sessionSigner(for station: StationID) -> (any SessionSigner)? {
        if let signer = sessionSigners[station] { return signer }
        guard let key = sessionStations[station], let made = makeSessionSigner(key) else { return nil }
        sessionSigners[station] = made
        return made
    }

    /// Seals what goes to `station` from now on (nothing without a code).
    public mutating func sealFor(_ station: StationID) {
        guard seal != nil else { return }
        sealedStations.insert(station)
    }
}
