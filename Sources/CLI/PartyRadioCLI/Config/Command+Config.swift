extension Command {
    /// Parses `arguments` with the defaults of `config` added where the command line sets no
    /// such option. `--help` and `--version` never depend on the file; an error that only the
    /// file's values cause says so.
    /// - Parameter config: the file, or the error reading it (reported only when it matters).
    public static func parse(
        _ arguments: [String], environment: [String: String], knobs: EnvironmentKnobs = EnvironmentKnobs(),
        config: () -> Result<ConfigFile, ConfigFile.Error>, configPath: String
    ) throws(UsageError) -> Command {
        let plain = Result { () throws(UsageError) in try parse(arguments, environment: environment, knobs: knobs) }
        if case .success(let command) = plain {
            switch command {
            case .help, .version, .manPage, .completion: return command
            default: break
            }
        }
        guard let name = arguments.first, ConfigFile.keys.contains(where: { $0.commands.contains(name) }) else {
            return try plain.get()
        }
        let file: ConfigFile
        switch config() {
        case .success(let loaded): file = loaded
        case .failure(let error): throw UsageError(error.message + ".", command: nil)
        }
        let rest = Array(arguments.dropFirst())
        let added = file.arguments(for: name, given: rest)
        if added.isEmpty { return try plain.get() }
        do { return try parse([name] + added + rest, environment: environment, knobs: knobs) } catch {
            // The file is to blame when the command line alone parses, or when the error names an
            // option only the file set.
            let named = added.contains { $0.hasPrefix("-") && error.message.contains("'\($0)'") }
            if case .failure = plain, !named { throw error }
            var error = error
            error.message += " (This comes from the config file \(configPath).)"
            throw error
        }
    }
}
