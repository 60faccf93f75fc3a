import PartyRadioCatalog

/// What a command runs with, passed in rather than reached for, so tests run any command
/// in-process: the environment, where output goes, and the wall clock.
public struct CommandContext: Sendable {
    /// The process environment (locale, `XDG_STATE_HOME`, `HOME`, `USER`).
    public let environment: [String: String]
    /// Its `PARTYRADIO_*` variables, parsed once, here.
    public let knobs: EnvironmentKnobs
    /// The desktop's variables the nodes act on, read once, here: the PulseAudio server
    /// (`PULSE_SERVER`, for the player) and the session bus (`DBUS_SESSION_BUS_ADDRESS`, where
    /// MPRIS offers the player). Empty is unset.
    public let soundServer: String?
    public let sessionBus: String?
    /// Where the command prints (``Console/standard`` outside tests).
    public var console: Console
    /// Unix time in seconds: developer-token issue times and log timestamps.
    public var clock: @Sendable () -> Double

    /// A context; the console and clock default to the real ones.
    public init(
        environment: [String: String], console: Console = .standard,
        clock: @escaping @Sendable () -> Double = Catalog.systemTime
    ) {
        self.environment = environment
        knobs = EnvironmentKnobs(environment)
        soundServer = environment["PULSE_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
        sessionBus = environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
        self.console = console
        self.clock = clock
    }
}
