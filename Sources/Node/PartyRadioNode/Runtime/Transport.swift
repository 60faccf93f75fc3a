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

/// The wire edge of a node: its unicast sockets, sending the bytes the driver's ``Outbox`` made,
/// and draining what arrived. Owned by the node's thread alone.
final class Transport {
    /// One socket per family the node speaks, on one port.
    let sockets: UnicastSockets
    /// This node's key, which its ``Outbox`` signs with.
    let identity: Identity
    /// A private station's secret, if this node holds its code.
    let seal: CodeSeal?

    init(sockets: UnicastSockets, identity: Identity, seal: CodeSeal? = nil) {
        self.seal = seal
        self.sockets = sockets
        self.identity = identity
    }

    /// The outbox that numbers, signs and seals what this node sends: with its key, the session MACs
    /// its key makes, and the code's seal.
    func outbox() -> Outbox {
        Outbox(signer: identity, seal: seal, sessionSigner: { [identity] key in identity.sessionSigner(for: key) })
    }

    /// Sends one datagram to each of `addresses`.
    func send(_ bytes: [UInt8], to addresses: [SocketAddress]) {
        for address in addresses {
            do { try sockets.send(bytes, to: address) } catch {
                Log.debug(.wire, "send to \(address) failed: \(error)")
            }
        }
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
