import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// A received, decoded and verified datagram.
public struct Received: Sendable {
    public var datagram: Datagram
    public var from: SocketAddress
    /// The local clock when the datagram was taken off the socket.
    public var receivedAtNs: Int64

    public var message: Message { datagram.message }
    public var sender: PublicKey { datagram.header.sender }
}

/// Who a transport accepts datagrams from.
public enum SenderPolicy: Sendable {
    /// A DJ: listener kinds for our station, each signed by the key in its header.
    case listenersOf(StationID)
    /// A listener or observer: DJ kinds signed by the station key pinned from DNS-SD.
    case station(StationID, PublicKey)
    /// An observer of many stations: DJ kinds, each signed by its own station's pinned key.
    case stations([StationID: PublicKey])
}

/// Encodes, signs and sends messages; receives, decodes, verifies and de-duplicates them.
/// Everything dropped is counted by reason in ``drops``.
public final class Transport: @unchecked Sendable {
    public let socket: UDPSocket
    public let identity: Identity
    public let stationID: StationID
    private var sequence: UInt64
    private var replay = ReplayWindow()
    public private(set) var drops = DropCounters()
    /// Test-only fault injection: drop this share of outgoing datagrams (seeded, off by default).
    public var faults: FaultInjector?

    public init(socket: UDPSocket, identity: Identity, stationID: StationID, clock: some NanoClock) {
        self.socket = socket
        self.identity = identity
        self.stationID = stationID
        // Sequence numbers start at the clock in microseconds, so a restarted sender starts
        // above anything it sent before and receivers' replay windows let it through.
        sequence = UInt64(max(1, clock.now() / 1000))
    }

    /// Sends `message`; returns the sequence number it went out with.
    @discardableResult
    public func send(_ message: Message, to address: SocketAddress, station: StationID? = nil) -> UInt64 {
        sequence += 1
        guard
            let bytes = try? Datagram.encode(
                message, stationID: station ?? stationID, sequence: sequence, signer: identity)
        else { return sequence }
        if faults?.shouldDrop() == true { return sequence }
        try? socket.send(bytes, to: address)
        return sequence
    }

    /// Drains `socket` (this transport's or another, e.g. the group socket) and returns
    /// every datagram that passes `policy`, each stamped with `clock` as it came off the socket.
    public func receiveAll(from socket: UDPSocket? = nil, policy: SenderPolicy, clock: some NanoClock) -> [Received] {
        var result: [Received] = []
        while let (bytes, length, from) = try? (socket ?? self.socket).receive() {
            let now = clock.now()
            if let received = accept(bytes: bytes, length: length, from: from, policy: policy, now: now) {
                result.append(received)
            }
        }
        return result
    }

    func accept(bytes: [UInt8], length: Int, from: SocketAddress, policy: SenderPolicy, now: Int64) -> Received? {
        do throws(WireError) {
            guard length <= Datagram.maxSize else { throw .oversized(length) }
            let datagram = try Datagram.decode(bytes)
            let header = datagram.header
            switch policy {
            case .listenersOf(let id):
                guard header.stationID == id else { throw .wrongStation }
                guard !header.kind.isFromDJ else { throw .unexpectedSender }
            case .station(let id, let key):
                guard header.stationID == id else { throw .wrongStation }
                guard header.kind.isFromDJ else { throw .unexpectedSender }
                guard header.sender == key else { throw .badSignature }
            case .stations(let keys):
                guard let key = keys[header.stationID] else { throw .wrongStation }
                guard header.kind.isFromDJ else { throw .unexpectedSender }
                guard header.sender == key else { throw .badSignature }
            }
            guard Sodium.verify(datagram) else { throw .badSignature }
            guard replay.accept(header.sequence, from: header.sender) else { throw .replayed }
            return Received(datagram: datagram, from: from, receivedAtNs: now)
        } catch {
            drops.record(error)
            return nil
        }
    }
}

/// Seeded outgoing-packet loss for tests of the transport itself (`PARTYRADIO_FAULT_LOSS`).
public struct FaultInjector: Sendable {
    public var lossShare: Double
    private var state: UInt64

    public init(lossShare: Double, seed: UInt64) {
        self.lossShare = lossShare
        state = seed | 1
    }

    mutating func shouldDrop() -> Bool {
        // xorshift64*: small, seeded, good enough to pick packets.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let value = Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
        return value < lossShare
    }
}
