/// Where a node's effects go, one port per edge: the clock, datagrams, discovery, the player, the
/// catalog, the store, the reporter and the web page. ``NodeDriver`` runs a machine and hands each
/// effect to its port; the node runtime implements the ports on real sockets, Avahi, libmpv,
/// SQLite and the terminal, and the simulated LAN implements them in memory, so both run the same
/// driver and ``Outbox``.
///
/// Every call comes on the node's thread (the driver's caller), one at a time.
public protocol NodePorts: AnyObject {
    // MARK: Clock

    /// This node's clock now: the instant of an input that has none of its own, and a time ping's
    /// or pong's stamp, read as late as possible before it is sent.
    func now() -> LocalTime
    /// The machine's real-time clock in nanoseconds, which sequence numbers follow
    /// (``Outbox/nextSequence(after:realTimeNs:)``).
    func realTimeNs() -> Int64

    // MARK: Datagrams

    /// Sends one datagram, already signed and sealed: to a peer, or to the group in every family
    /// the node speaks (the same bytes each time).
    func send(_ datagram: [UInt8], to destination: Destination)
    /// Joins `group` in every family the node speaks; returns those that joined. Throws when none
    /// could: the node stops with that error.
    func joinGroup(_ group: MulticastGroup) throws(NodeError) -> [AddressFamily]

    // MARK: Discovery

    func publish(name: String, port: UInt16, txt: [String])
    /// Starts browsing; `name`: a station the guest named, asked for at once besides.
    func browse(resolving name: String?)

    // MARK: Player

    func drivePlayer(_ command: PlayerCommand)
    func follow(_ view: StationClockView)
    /// A live station's frame or repair for the live output, on the node's thread: hand it off
    /// (the output plays on a thread of its own).
    func live(_ input: LiveReceived)
    /// A method call to the MPRIS player a live DJ follows: hand it off (the follower's bus thread
    /// makes it).
    func callPlayer(_ call: LivePlayerCall)

    // MARK: Catalog

    /// Asks the catalog; the answer comes back later as ``NodeInput/catalog(_:)``.
    func ask(_ request: CatalogRequest)

    // MARK: Store

    /// Stores the DJ's station, synchronously: the driver calls it before the step's other
    /// effects, so nothing acknowledged is unsaved.
    func save(_ station: SavedStation)
    func record(_ play: PlayRecord)
    /// Remembers the key a station name showed.
    func pin(name: String, key: PublicKey)
    /// Keeps a speaker's settings (``Effect/keepSpeaker(_:)``).
    func keepSpeaker(_ state: SpeakerControlState)

    // MARK: Reporter

    func report(_ event: NodeEvent)
    func log(_ topic: Log.Topic, _ message: String)

    // MARK: Web

    /// The answer to a web guest's action or search.
    func webReply(ticket: UInt64, _ reply: WebReply)
}

extension NodePorts {
    /// Nodes without a live output (the DJ, the observer, the simulated LAN) drop live input.
    public func live(_ input: LiveReceived) {}
    /// Nodes that follow no player (all but a live DJ with `--live-player`) drop the call.
    public func callPlayer(_ call: LivePlayerCall) {}
    /// Nodes that are no speaker keep nothing.
    public func keepSpeaker(_ state: SpeakerControlState) {}
}

/// A datagram as it came off a socket, stamped with this node's clock as it was taken.
public struct Arrival: Sendable {
    public var bytes: [UInt8]
    public var from: PeerAddress
    public var at: LocalTime
    /// The family of the group socket it came from; nil when it came to the node's own address.
    public var group: AddressFamily?
    /// The sender's machine, if the node looked it up (the DJ: ``MachineID``); nil: its address
    /// stands for it.
    public var machine: MachineID?

    public init(
        bytes: [UInt8], from: PeerAddress, at: LocalTime, group: AddressFamily? = nil, machine: MachineID? = nil
    ) {
        self.bytes = bytes
        self.from = from
        self.at = at
        self.group = group
        self.machine = machine
    }
}
