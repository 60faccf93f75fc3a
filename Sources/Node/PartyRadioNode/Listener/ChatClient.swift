import PartyRadioCore

/// `partyradio chat`: runs a ``ChatterMachine`` on the ``NodeRuntime`` until the DJ answers.
public enum ChatClient {
    /// Returns the DJ's answer, or nil when the user quit first.
    /// - Parameters:
    ///   - text: the line, already checked (1–280 characters of plain text).
    ///   - name: the guest name shown with it.
    public static func send(
        _ text: String, as name: GuestName, station query: String?, timeoutNs: Int64, settings: NodeSettings,
        inbox: Inbox<NodeInput>
    ) throws(NodeError) -> ChatterMachine.Result? {
        let interface = try settings.chooseInterface()
        let identity = try settings.identity("voter")  // the guest's key for one-shot commands
        let sockets = try settings.unicastSockets(interface: interface)
        let transport = settings.transport(sockets: sockets, identity: identity)
        // The clock in microseconds: a later `chat` from this key always has a higher ID.
        let send = ChatSend(messageID: UInt64(max(1, settings.clock.now().ns / 1000)), name: name.value, text: text)
        let machine = ChatterMachine(
            send: send, query: query, timeoutNs: timeoutNs, interfaceName: interface.name, verifier: settings.verifier)
        let runtime = try NodeRuntime(
            machine: machine, settings: settings, interface: interface, transport: transport, player: nil,
            inbox: inbox)
        try runtime.run()
        return runtime.machine.result
    }
}
