import PartyRadioCore
import PartyRadioMedia

/// The `partyradio` program: parses the command line and runs the command.
public enum PartyRadio {
    /// What `partyradio --version` prints.
    public static let version = "0.1.0"

    /// Runs `arguments` (without the program name) against this process's stdout and stderr.
    /// - Returns: the exit code (see ``ExitCode``).
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        MpvLibrary.keepLargeBlocksOutOfTheHeap()
        return main(arguments: arguments, context: CommandContext(environment: environment))
    }

    /// Runs `arguments` with `context`'s environment, console and clock (tests collect the output).
    ///
    /// Every command goes the same way: ``Command/parse(_:environment:)``, `-v` turning on
    /// logging to stderr, then one switch. A usage error prints `Error: …` and the help hint and
    /// exits 2.
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        let command: Command
        do {
            command = try Command.parse(
                arguments, environment: context.environment, knobs: context.knobs,
                config: {
                    Result { () throws(ConfigFile.Error) in try ConfigFile.load(environment: context.environment) }
                },
                configPath: ConfigFile.path(environment: context.environment))
        } catch {
            context.console.error(error.message, hint: error.hint)
            return ExitCode.usage.rawValue
        }
        if let common = command.common, common.verbose {
            StderrLog.bootstrap(console: context.console, clock: context.clock)
            let stateDirectory = StateDirectory.resolve(common.stateDir, environment: context.environment)
            Log.debug(.cli, "partyradio \(version) \(command.name ?? ""); state directory \(stateDirectory)")
        }
        switch command {
        case .help(let name): return help(name, console: context.console)
        case .version:
            context.console.out("partyradio \(version)")
            return ExitCode.success.rawValue
        case .dj(let options): return NodeCommands.dj(options, context: context)
        case .listen(let options): return NodeCommands.listen(options, context: context)
        case .speaker(let options): return NodeCommands.speaker(options, context: context)
        case .speakers(let options): return SpeakersCommand.list(options, context: context)
        case .speakerSet(let options): return SpeakersCommand.set(options, context: context)
        case .stations(let options): return StationsCommand.run(options, context: context)
        case .vote(let options): return GuestCommands.vote(options, context: context)
        case .chat(let options): return GuestCommands.chat(options, context: context)
        case .request(let options): return GuestCommands.request(options, context: context)
        case .queue(let options): return GuestCommands.queue(options, context: context)
        case .stats(let options): return StatsCommand.run(options, context: context)
        case .search(let options): return CatalogCommands.search(options, context: context)
        case .lookup(let options): return CatalogCommands.lookup(options, context: context)
        case .charts(let options): return CatalogCommands.charts(options, context: context)
        case .token(let options): return CatalogCommands.token(options, context: context)
        case .doctor(let options): return DoctorCommand.run(options, context: context)
        case .manPage:
            context.console.write(ManPage.render(version: version), to: .out)
            return ExitCode.success.rawValue
        case .completion(let shell):
            context.console.write(CompletionScript.render(for: shell), to: .out)
            return ExitCode.success.rawValue
        }
    }

    /// Prints a help page to stdout (exit 0), or says there is no such command (exit 2).
    static func help(_ name: String?, console: Console) -> Int32 {
        guard let name else {
            console.write(HelpPages.topLevel, to: .out)
            return ExitCode.success.rawValue
        }
        guard let page = HelpPages.page(for: name) else {
            console.error("Unknown command '\(name)'.", hint: "See 'partyradio --help'.")
            return ExitCode.usage.rawValue
        }
        console.write(page.rendered, to: .out)
        return ExitCode.success.rawValue
    }
}
