import PartyRadioCore
import PartyRadioSecurity

extension DoctorProbes {
    /// Looks for a station on the air and, if one answers, measures this machine's clock against
    /// it with a few time pings (``ClockProbeMachine``), from a throwaway key and a fresh socket.
    public static func clock(
        settings: NodeSettings, configuration: ClockProbeMachine.Configuration = ClockProbeMachine.Configuration()
    ) -> ClockProbeMachine.Outcome {
        do throws(NodeError) {
            let interface = try settings.chooseInterface()
            let sockets = try settings.unicastSockets(interface: interface)
            let transport = Transport(sockets: sockets, identity: Identity.generate())
            let runtime = try NodeRuntime(
                machine: ClockProbeMachine(configuration: configuration, verifier: SodiumVerifier()),
                settings: settings, interface: interface, transport: transport, player: nil, inbox: Inbox())
            try runtime.run()
            return runtime.machine.outcome ?? .noStation
        } catch {
            return .failed(error.description)
        }
    }
}
