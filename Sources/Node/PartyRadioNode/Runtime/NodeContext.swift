import Foundation
import PartyRadioCore
import PartyRadioNet
import PartyRadioSecurity

/// What every node needs to start: interface, state directory, clock, output.
public struct NodeSettings: Sendable {
    public var interfaceName: String?
    public var stateDirectory: URL
    public var clock: NodeClock
    public var reporter: any NodeReporter
    /// The keys of the private station whose code was given (`--code`); derived once, here, since
    /// the derivation is deliberately slow (Argon2id).
    public let seal: CodeSeal?
    /// `--domain`: a unicast DNS-SD domain to publish in (the DJ) or browse besides mDNS (guests).
    public var domain: DomainSettings?
    /// The desktop session's D-Bus address (the command's `DBUS_SESSION_BUS_ADDRESS`), where
    /// `dj` and `listen` offer their MPRIS player; nil: none.
    public var sessionBus: String?

    public init(
        interfaceName: String?, stateDirectory: URL, clock: NodeClock = NodeClock(), reporter: any NodeReporter,
        code: JoinCode? = nil, sessionBus: String? = nil, domain: DomainSettings? = nil
    ) {
        self.sessionBus = sessionBus
        self.domain = domain
        seal = code.map(CodeSeal.init(code:))
        self.interfaceName = interfaceName
        self.stateDirectory = stateDirectory
        self.clock = clock
        self.reporter = reporter
    }

    /// The signature check, carrying the code's keys when one was given.
    var verifier: SodiumVerifier { SodiumVerifier(seal: seal) }

    /// The wire edge on `sockets`, sealing for the private station of the code given, if any.
    func transport(sockets: UnicastSockets, identity: Identity) -> Transport {
        Transport(sockets: sockets, identity: identity, seal: seal)
    }

    func chooseInterface() throws(NodeError) -> NetworkInterface {
        do { return try NetworkInterface.choose(interfaceName) } catch {
            throw NodeError(.network, error.description, cause: error)
        }
    }

    func identity(_ name: String) throws(NodeError) -> Identity {
        do { return try KeyStore(directory: stateDirectory).loadOrCreate(name) } catch {
            throw NodeError(.storage, error.description, cause: error)
        }
    }

    /// The node's unicast UDP sockets on `port` (0: any free port), one per family `interface`
    /// has (docs/NETWORKS.md), each multicast-sending on `interface`.
    func unicastSockets(interface: NetworkInterface, port: UInt16 = 0) throws(NodeError) -> UnicastSockets {
        do {
            // A big receive buffer is a nicety: the default still works.
            return try UnicastSockets(interface: interface, port: port, receiveBuffer: 4 << 20)
        } catch {
            throw NodeError(.network, "Cannot open a UDP socket: \(error); check --interface and --port.", cause: error)
        }
    }
}
