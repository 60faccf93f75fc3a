import PartyRadioCore
import PartyRadioSecurity

/// A guest's one-shot command (`vote`, `vote --request`, `chat`, `request`, `queue`): runs a
/// ``GuestExchange`` over its request on the ``NodeRuntime`` until the station answers.
public enum GuestClient {
    /// Returns the station's answer, or nil when the user quit first; throws the command's error
    /// (not found, timed out, refused, …).
    /// - Parameters:
    ///   - station: the station the user named (nil: the only one there is).
    ///   - key: the guest's key in the state directory (`voter`: votes, requests and chat go by
    ///     key, and not under the listener's key, which a `listen` beside this may be using with
    ///     its own sequence numbers); nil: a throwaway key (a query needs no identity).
    ///   - catalog: where this node searches when a request is a search term.
    ///   - trustNewKey: accept (and remember) a station that shows another key than this state
    ///     directory met before, instead of refusing it, as `listen --trust-new-key` does.
    public static func ask<Request: StationRequest>(
        _ request: Request, station: String?, timeoutNs: Int64, key: String?, catalog: (any TrackCatalog)? = nil,
        trustNewKey: Bool = false, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> GuestExchange<Request>.Answered? {
        let interface = try settings.chooseInterface()
        let identity = if let key { try settings.identity(key) } else { Identity.generate() }
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        // The keys station names showed before, in the listener's list: every command refuses a
        // changed one alike, and remembers a new one.
        let known = KnownStations(directory: settings.stateDirectory)
        let machine = GuestExchange(
            request, station: station, timeoutNs: timeoutNs, interfaceName: interface.name,
            verifier: settings.verifier, pins: KeyPins(known: known.keys, trustNewKey: trustNewKey))
        let runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, player: nil,
            catalog: catalog, knownStations: known, inbox: inbox)
        try runtime.run()  // throws the machine's error, if it failed
        return runtime.machine.result
    }
}
