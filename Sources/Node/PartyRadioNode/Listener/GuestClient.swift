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
    public static func ask<Request: StationRequest>(
        _ request: Request, station: String?, timeoutNs: Int64, key: String?, catalog: (any TrackCatalog)? = nil,
        settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> GuestExchange<Request>.Answered? {
        let interface = try settings.chooseInterface()
        let identity = if let key { try settings.identity(key) } else { Identity.generate() }
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        let machine = GuestExchange(
            request, station: station, timeoutNs: timeoutNs, interfaceName: interface.name,
            verifier: settings.verifier)
        let runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, player: nil,
            catalog: catalog, inbox: inbox)
        try runtime.run()  // throws the machine's error, if it failed
        return runtime.machine.result
    }
}
