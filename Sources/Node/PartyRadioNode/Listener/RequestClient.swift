import PartyRadioCore
import PartyRadioSecurity

/// The guests' one-shot request commands on the ``NodeRuntime``: `request` (a
/// ``RequesterMachine``), `vote --request` (a ``RequestVoterMachine``) and `queue` (a
/// ``QueueReaderMachine``). Each returns the DJ's answer, or nil when the user quit first.
public enum RequestClient {
    /// Asks the DJ to queue a track.
    /// - Parameters:
    ///   - name: the guest name the DJ shows with the request.
    ///   - catalog: where this node searches when the query is a search term.
    public static func request(
        _ query: RequesterMachine.Query, as name: GuestName, station: String?, timeoutNs: Int64,
        catalog: any TrackCatalog, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> RequesterMachine.Result? {
        try run(settings: settings, key: "voter", catalog: catalog, inbox: inbox) { interface in
            RequesterMachine(
                query: query, name: name.value, station: station, timeoutNs: timeoutNs, interfaceName: interface,
                verifier: settings.verifier)
        }?.result
    }

    /// Votes on a waiting request.
    public static func vote(
        _ vote: RequestVote, station: String?, timeoutNs: Int64, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> RequestVoterMachine.Result? {
        try run(settings: settings, key: "voter", inbox: inbox) { interface in
            RequestVoterMachine(
                vote: vote, station: station, timeoutNs: timeoutNs, interfaceName: interface,
                verifier: settings.verifier)
        }?.result
    }

    /// Reads what plays next.
    public static func queue(
        station: String?, timeoutNs: Int64, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> QueueReaderMachine.Result? {
        try run(settings: settings, key: nil, inbox: inbox) { interface in
            QueueReaderMachine(
                station: station, timeoutNs: timeoutNs, interfaceName: interface, verifier: settings.verifier)
        }?.result
    }

    /// Runs `make`'s machine until it finishes (its result is nil when the user quit first).
    /// - Parameter key: the guest's key in the state directory (`voter`: votes and requests are
    ///   counted per key, and not under the listener's key, which a `listen` beside this may be
    ///   using with its own sequence numbers); nil: a throwaway key (a query needs no identity).
    private static func run<Machine: NodeMachine>(
        settings: NodeSettings, key: String?, catalog: (any TrackCatalog)? = nil, inbox: Inbox<NodeInput>,
        _ make: (String) -> Machine
    ) throws(NodeError) -> Machine? {
        let interface = try settings.chooseInterface()
        let identity = if let key { try settings.identity(key) } else { Identity.generate() }
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        let runtime = try NodeRuntime(
            machine: make(interface.name), settings: settings, interface: interface, transport: transport,
            player: nil, catalog: catalog, inbox: inbox)
        try runtime.run()  // throws the machine's error, if it failed
        return runtime.machine
    }
}
