import PartyRadioCore

/// The result of a one-shot vote, as the DJ acknowledged it.
public typealias VoteResult = VoterMachine.Result

/// `partyradio vote`: runs a ``VoterMachine`` on the ``NodeRuntime`` until the DJ acknowledges.
public enum VoteClient {
    /// Returns the acknowledged vote, or nil when the user quit first.
    public static func vote(
        _ choice: VoteChoice, station query: String?, timeoutNs: Int64, settings: NodeSettings, inbox: Inbox<NodeInput>
    ) throws(NodeError) -> VoteResult? {
        let interface = try settings.chooseInterface()
        // The guest's voting key: one vote per key per track. Not the listener's key, which a
        // `listen` running beside this may be using with its own sequence numbers.
        let identity = try settings.identity("voter")
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        let machine = VoterMachine(
            choice: choice, query: query, timeoutNs: timeoutNs, interfaceName: interface.name,
            verifier: settings.verifier)
        let runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, player: nil,
            inbox: inbox)
        try runtime.run()
        return runtime.machine.result
    }
}
