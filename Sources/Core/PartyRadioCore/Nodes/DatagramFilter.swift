/// Checks a datagram's Ed25519 signature. The core stays free of C: the runtime passes
/// libsodium's check, the simulator a stand-in.
public protocol DatagramVerifier: Sendable {
    func verify(_ datagram: Datagram) -> Bool
    /// The station ID a key owns (the ID is derived from the key); nil when this verifier cannot
    /// derive it (tests with made-up IDs), so adverts are not checked against it.
    func stationID(for key: PublicKey) -> StationID?
    /// The private station's secret (from its join code), if this node holds one. It rides with
    /// the verifier because the same filter that checks signatures opens sealed datagrams first,
    /// and the same watch that checks adverts opens sealed TXT records.
    var seal: (any StationSeal)? { get }
    /// The key this node shares with `peer` for session MACs (docs/PROTOCOL.md, "Session MAC"):
    /// a DJ's, made from its own secret key and the guest's public one; nil when this node takes
    /// no MACs, or `peer` is no usable key. Costs about what a signature check does.
    func sessionKey(with peer: PublicKey) -> SessionKey?
    /// Whether `datagram` ends in the right session MAC under `key`.
    func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool
}

extension DatagramVerifier {
    public func stationID(for key: PublicKey) -> StationID? { nil }
    public var seal: (any StationSeal)? { nil }
    public func sessionKey(with peer: PublicKey) -> SessionKey? { nil }
    public func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool { false }
}

/// Who a node accepts datagrams from.
public enum SenderPolicy: Sendable, Equatable {
    /// A DJ: listener kinds for our station, each signed by the key in its header.
    case listenersOf(StationID)
    /// An observer of many stations: DJ kinds, each signed by its own station's pinned key; from
    /// the `sealed` ones (private stations whose advert opened under our code) sealed datagrams
    /// only, as a private DJ takes them.
    case stations([StationID: PublicKey], sealed: Set<StationID> = [])
}

extension SenderPolicy {
    /// One station's datagrams: signed by its advert's key, and sealed if it is private.
    static func pinned(_ id: StationID, _ advert: StationAdvert) -> SenderPolicy {
        .stations([id: advert.publicKey], sealed: advert.isPrivate ? [id] : [])
    }
}

/// A guest's message the machine takes: a datagram that passed the filter, or (the DJ) a web
/// guest's action, which is no datagram and carries no signature.
public struct Inbound: Sendable {
    /// Where the message came from, and so where its answer goes.
    public enum Origin: Hashable, Sendable {
        /// A datagram from a node at this address: answered by a datagram there.
        case node(PeerAddress)
        /// The DJ's web page, from the browser at `address`: answered to the HTTP request `ticket`
        /// names (nil: nobody waits, a listening page's hello).
        case web(ticket: UInt64?, address: String)

        /// The source's IP address, for the one-guest-one-vote rule.
        public var host: String {
            switch self {
            case .node(let peer): peer.host
            case .web(_, let address): address
            }
        }
    }

    public var message: Message
    /// The key that signed the datagram, or the web guest's key.
    public var sender: PublicKey
    public var stationID: StationID
    /// The datagram's sequence number, or the one the web server gave the action.
    public var sequence: UInt64
    public var origin: Origin
    /// The sender's machine as the LAN sees it: what the DJ counts voters, limits and mutes by.
    public var machine: MachineID
    public var receivedAt: LocalTime

    /// - Parameter machine: the sender's machine; nil: its address stands for it.
    public init(
        message: Message, sender: PublicKey, stationID: StationID, sequence: UInt64, origin: Origin,
        machine: MachineID? = nil, receivedAt: LocalTime
    ) {
        self.message = message
        self.sender = sender
        self.stationID = stationID
        self.sequence = sequence
        self.origin = origin
        self.machine = machine ?? .address(origin.host)
        self.receivedAt = receivedAt
    }

    /// A datagram that passed the filter, from `peer` on `machine`.
    init(_ datagram: Datagram, from peer: PeerAddress, machine: MachineID?, receivedAt: LocalTime) {
        self.init(
            message: datagram.message, sender: datagram.header.sender, stationID: datagram.header.stationID,
            sequence: datagram.header.sequence, origin: .node(peer), machine: machine, receivedAt: receivedAt)
    }
}

/// Decodes, checks the sender against the policy, verifies the signature and rejects replays;
/// everything dropped is counted by reason in ``drops`` (docs/PROTOCOL.md, "Drops"). A DJ's filter
/// answers an unknown sender with a cookie challenge when its verification budget is short
/// (``SenderGate``); a guest's takes the challenges its station sends.
public struct DatagramFilter: Sendable {
    private let verifier: any DatagramVerifier
    private var replay = ReplayWindow()
    private var gate: SenderGate
    public private(set) var drops = DropCounters()
    /// Why the last datagram was dropped, for the log line.
    private var lastReason: String?
    /// The session keys of guests this node has checked (their signature or MAC): a vote's MAC
    /// is then checked in a microsecond instead of a signature's tens.
    private var sessions = SessionKeys()
    /// What the last datagram asked to be sent: the DJ's cookie challenge to its sender, or the
    /// cookie a station's challenge gave this node (``accept(_:from:at:policy:logInto:)`` turns it
    /// into an effect).
    private var pending: Effect?
    /// Cookie challenges taken from stations (each one's cookie goes into what this node sends
    /// there next, if the outbox finds that it answers one of them).
    public private(set) var challengesTaken = 0

    /// - Parameter cookieSecret: the admission cookies' key (a DJ's), random unless a test sets it.
    public init(
        verifier: any DatagramVerifier, limits: SenderGate.Limits = SenderGate.Limits(),
        cookieSecret: (UInt64, UInt64)? = nil
    ) {
        self.verifier = verifier
        gate = SenderGate(limits: limits, cookieSecret: cookieSecret)
    }

    /// The datagram, if it passes; nil (and counted) if not. `machine`: the sender's, as the runtime
    /// found it (nil: the address stands for it).
    public mutating func accept(
        _ bytes: [UInt8], from: PeerAddress, machine: MachineID? = nil, at now: LocalTime, policy: SenderPolicy
    ) -> Inbound? {
        pending = nil
        do throws(WireError) {
            let datagram = try Datagram.decode(try unsealed(bytes, policy: policy))
            let header = datagram.header
            switch policy {
            case .listenersOf(let id):
                guard header.stationID == id else { throw .wrongStation }
                guard !header.kind.isFromDJ else { throw .unexpectedSender }
            case .stations(let keys, let sealed):
                guard let key = keys[header.stationID] else { throw .wrongStation }
                guard !sealed.contains(header.stationID) || SealedDatagram.isSealed(bytes) else { throw .unsealed }
                guard header.kind.isFromDJ else { throw .unexpectedSender }
                guard header.sender == key else { throw .badSignature }
            }
            if case .cookieChallenge(let challenge) = datagram.message {
                // Unauthenticated by design: its cookie is all that is taken from it (the outbox
                // checks that it answers a datagram sent there), and it is never a message.
                challengesTaken += 1
                pending = .cookieFrom(header.stationID, challenge)
                return nil
            }
            // Cheap checks before the expensive one: a replay, or a sender over its share, costs no
            // signature check.
            guard replay.wouldAccept(header.sequence, from: header.sender) else { throw .replayed }
            switch gate.admit(sender: header.sender, from: from, cookie: header.cookie, now: now) {
            case .verify: break
            case .rateLimited: throw .rateLimited
            case .overBudget: throw .overBudget
            case .challenge(let cookie):
                pending = .send(
                    .cookieChallenge(CookieChallenge(echo: header.sequence, cookie: cookie)), to: .peer(from),
                    station: header.stationID)
                throw .challenged
            }
            switch header.authentication {
            case .signature:
                guard verifier.verify(datagram) else { throw .badSignature }
            case .session:
                // Only a DJ takes MACs (a guest's votes); the key is made on first contact, under the
                // gate's budget like a signature check, and kept once a MAC checked out under it.
                guard case .listenersOf = policy else { throw .badMAC }
                let known = sessions.key(for: header.sender)
                guard let key = known ?? verifier.sessionKey(with: header.sender),
                    verifier.verify(datagram, sessionKey: key)
                else { throw .badMAC }
                if known == nil { sessions.insert(key, for: header.sender) }
            case .unsigned:
                throw .unexpectedSender  // only a challenge comes so, and it was taken above
            }
            guard replay.accept(header.sequence, from: header.sender) else { throw .replayed }
            gate.accepted(sender: header.sender, host: from.host)
            return Inbound(datagram, from: from, machine: machine, receivedAt: now)
        } catch {
            drops.record(error)
            lastReason = error.counterName
            return nil
        }
    }

    /// The inner datagram of a sealed one, or a clear one as it came. Opening costs about a
    /// microsecond (XChaCha20-Poly1305 over at most 1.2 kB), against tens for an Ed25519 check, so
    /// it comes before the gate, which needs the sender key inside. A DJ with a seal is a private
    /// station and takes nothing in clear: a guest without the code cannot vote, chat or count.
    /// An observer takes clear datagrams from public stations beside the sealed ones of the
    /// station its code opens (a clear one under a private station's ID would still need that
    /// station's signature).
    private func unsealed(_ bytes: [UInt8], policy: SenderPolicy) throws(WireError) -> [UInt8] {
        let seal = verifier.seal
        guard SealedDatagram.isSealed(bytes) else {
            if case .listenersOf = policy, seal != nil { throw .unsealed }
            return bytes
        }
        guard bytes.count <= SealedDatagram.maxSize else { throw .oversized(bytes.count) }
        guard let seal else { throw .sealed }
        guard let inner = seal.open(datagram: bytes) else { throw .badSeal }
        return inner
    }

    /// Drops are logged (for `-v`) at most this often; the lines between are counted in the next.
    public static let dropLogIntervalNs = Nanos.ms(100)
    private var lastDropLogAt = LocalTime(ns: .min / 2)
    private var unloggedDrops = 0

    /// ``accept(_:from:at:policy:)``, logging a drop for `-v` into `effects`: one line per
    /// ``dropLogIntervalNs`` at most, so that a flood costs counting, not a line per datagram.
    public mutating func accept(
        _ bytes: [UInt8], from: PeerAddress, machine: MachineID? = nil, at now: LocalTime, policy: SenderPolicy,
        logInto effects: inout [Effect]
    ) -> Inbound? {
        let total = drops.total
        let inbound = accept(bytes, from: from, machine: machine, at: now, policy: policy)
        if let pending {
            effects.append(pending)
            self.pending = nil
        }
        guard inbound == nil, drops.total > total else { return inbound }
        guard now - lastDropLogAt >= Self.dropLogIntervalNs else {
            unloggedDrops += 1
            return nil
        }
        let before = unloggedDrops
        lastDropLogAt = now
        unloggedDrops = 0
        let reason = lastReason ?? "unknown"
        effects.append(
            .log(
                .wire,
                "dropped a datagram from \(from): \(reason) (\(drops.total) dropped so far"
                    + (before > 0 ? "; \(before) more since the last line)" : ")")))
        return nil
    }

    /// Forgets a sender's replay window (a station that said goodbye may restart).
    public mutating func forget(_ sender: PublicKey) { replay.forget(sender) }

    /// Makes the session key of a guest whose signature just checked out (a listener joining),
    /// so that its votes' MACs are checked without a key exchange on the vote's path. Nothing when
    /// it is known already, or this node takes no MACs.
    public mutating func prepareSession(for guest: PublicKey) {
        guard sessions.key(for: guest) == nil, let key = verifier.sessionKey(with: guest) else { return }
        sessions.insert(key, for: guest)
    }

    /// Whether a MAC from `guest` would be checked under a key made already.
    public func hasSession(for guest: PublicKey) -> Bool { sessions.key(for: guest) != nil }
}

/// The session keys a DJ has made, by guest key: at most ``capacity``, the oldest made forgotten
/// first (a guest forgotten has its key made again at its next MAC, under the gate's budget).
struct SessionKeys: Sendable {
    static let capacity = 4096
    private var keys: [PublicKey: SessionKey] = [:]
    /// The guests in the order their keys were made, as a ring of ``capacity``.
    private var order: [PublicKey] = []
    private var next = 0

    func key(for guest: PublicKey) -> SessionKey? { keys[guest] }

    mutating func insert(_ key: SessionKey, for guest: PublicKey) {
        guard keys.updateValue(key, forKey: guest) == nil else { return }
        if order.count < Self.capacity {
            order.append(guest)
        } else {
            keys[order[next]] = nil
            order[next] = guest
            next = (next + 1) % Self.capacity
        }
    }
}
