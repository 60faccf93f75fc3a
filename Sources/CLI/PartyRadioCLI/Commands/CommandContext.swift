import PartyRadioCatalog

/// What a command runs with, passed in rather than reached for, so tests run any command
/// in-process: the environment, where output goes, and the wall clock.
public struct CommandContext: Sendable {
    /// The process environment (locale, `XDG_STATE_HOME`, `HOME`, `USER`).
    public let environment: [String: String]
    /// Its `PARTYRADIO_*` variables, parsed once, here.
    public let knobs: EnvironmentKnobs
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
        self.console = console
        self.clock = clock
    }
}
