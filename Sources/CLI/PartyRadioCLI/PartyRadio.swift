import PartyRadioCore

/// The `partyradio` program: parses the command line and runs the command.
public enum PartyRadio {
    public static let version = "0.1.0"

    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        if let name = arguments.first, CatalogCommands.names.contains(name) {
            return runCatalog(name, Array(arguments.dropFirst()), environment: environment)
        }
        let command: Command
        do { command = try Command.parse(arguments) } catch {
            Console.error(error.message, hint: error.hint)
            return ExitCode.usage.rawValue
        }
        switch command {
        case .help(let name):
            guard let name else {
                Console.write(HelpPages.topLevel, to: 1)
                return ExitCode.success.rawValue
            }
            guard let page = HelpPages.page(for: name) ?? CatalogCommands.help(for: name) else {
                Console.error("Unknown command '\(name)'.", hint: "See 'partyradio --help'.")
                return ExitCode.usage.rawValue
            }
            Console.write(page.rendered, to: 1)
            return ExitCode.success.rawValue
        case .version:
            Console.out("partyradio \(version)")
            return ExitCode.success.rawValue
        case .dj(let options): return NodeCommands.dj(options, environment: environment)
        case .listen(let options): return NodeCommands.listen(options, environment: environment)
        case .stations(let options): return StationsCommand.run(options, environment: environment)
        case .vote(let options): return NodeCommands.vote(options, environment: environment)
        }
    }

    /// The catalog commands are async (libcurl transfers run as tasks); the CLI's entry is not.
    private static func runCatalog(_ name: String, _ arguments: [String], environment: [String: String]) -> Int32 {
        Blocking.run { await CatalogCommands.run(name, arguments, environment: environment) }
    }
}
