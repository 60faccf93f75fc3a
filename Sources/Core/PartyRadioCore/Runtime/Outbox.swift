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
    /// The admission cookies stations gave this node (``Effect/cookieFrom(_:_:)``), and when.
    public private(set) var cookies: [StationID: (cookie: UInt64, at: LocalTime)] = [:]
    /// The sequence numbers of the last datagrams that could carry a cookie, per station: a
    /// challenge is taken only when it answers one of them.
    private var recentSequences: [StationID: [UInt64]] = [:]
    /// How many sequence numbers per station a challenge may answer.
    public static let challengeWindow = 32
    /// A cookie is shown for this long after its challenge: its DJ takes it for one to two epochs
    /// (``AddressCookies/epochNs``), and a DJ that is busy again sends a new one.
    public static let cookieLifetimeNs = AddressCookies.epochNs

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
        case .timePongs(var pongs):
            pongs.serverSendNs = now.ns
            message = .timePongs(pongs)
        default:
            break
        }
        var cookie: UInt64?
        if message.kind.takesCookie {
            recentSequences[station, default: []].append(sequence)
            if recentSequences[station, default: []].count > Self.challengeWindow {
                recentSequences[station]?.removeFirst()
            }
            if let held = cookies[station], now - held.at < Self.cookieLifetimeNs { cookie = held.cookie }
        }
        let encoded =
            if message.kind.takesSessionMAC, let session = sessionSigner(for: station) {
                try? Datagram.encode(
                    message, stationID: station, sequence: sequence, session: session, fallback: signer, cookie: cookie)
            } else {
                try? Datagram.encode(message, stationID: station, sequence: sequence, signer: signer, cookie: cookie)
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

    /// Takes the admission cookie of `station`'s challenge if it answers one of the last datagrams
    /// sent there (whoever cannot read this node's traffic cannot know their sequence numbers), so
    /// that what goes there from now on shows it. Returns whether it was taken.
    @discardableResult
    public mutating func takeCookie(_ challenge: CookieChallenge, from station: StationID, now: LocalTime) -> Bool {
        guard recentSequences[station]?.contains(challenge.echo) == true else { return false }
        cookies[station] = (challenge.cookie, now)
        return true
    }

    /// Seals what goes to `station` from now on (nothing without a code).
    public mutating func sealFor(_ station: StationID) {
        guard seal != nil else { return }
        sealedStations.insert(station)
    }
}
