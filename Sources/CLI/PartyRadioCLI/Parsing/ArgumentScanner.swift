/// A usage error: exit code 2, printed as `Error: <message>` and a hint naming the command's help.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    /// The command whose `--help` the hint names (nil: the top-level help).
    public var command: String?

    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    public var hint: String { "See 'partyradio \(command.map { "\($0) " } ?? "")--help'." }
}

/// Walks a command's arguments in the style of swift-argument-parser: `--flag`, `--option value`,
/// `--option=value`, `-x` short forms, and positionals. Pure: no I/O, unit-tested.
public struct ArgumentScanner: Sendable {
    private var arguments: [String]
    private var position = 0
    public let command: String
    public private(set) var positionals: [String] = []

    public init(_ arguments: [String], command: String) {
        self.arguments = arguments
        self.command = command
    }

    /// The next option name (e.g. `--limit`) or nil at the end; positionals are collected on the way.
    /// An option written `--name=value` is split so that ``value(for:)`` returns `value`.
    public mutating func nextOption() -> String? {
        while position < arguments.count {
            let argument = arguments[position]
            position += 1
            if argument == "--" {
                positionals.append(contentsOf: arguments[position...])
                position = arguments.count
                return nil
            }
            if argument.hasPrefix("-") && argument.count > 1 && !isNegativeNumber(argument) {
                if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                    arguments.insert(String(argument[argument.index(after: equals)...]), at: position)
                    return String(argument[..<equals])
                }
                return argument
            }
            positionals.append(argument)
        }
        return nil
    }

    /// The value that follows option `name`.
    public mutating func value(for name: String) throws(UsageError) -> String {
        guard position < arguments.count else { throw UsageError("Missing value for '\(name)'.", command: command) }
        defer { position += 1 }
        return arguments[position]
    }

    public mutating func integer<T: FixedWidthInteger>(
        for name: String, in range: ClosedRange<T>
    ) throws(UsageError) -> T {
        let raw = try value(for: name)
        guard let number = T(raw), range.contains(number) else {
            throw UsageError(
                "'\(name)' takes a whole number from \(range.lowerBound) to \(range.upperBound); got '\(raw)'.",
                command: command)
        }
        return number
    }

    public mutating func seconds(for name: String, in range: ClosedRange<Double> = 0.1...86_400) throws(UsageError)
        -> Double
    {
        let raw = try value(for: name)
        guard let number = Double(raw), number.isFinite, range.contains(number) else {
            throw UsageError(
                "'\(name)' takes a number of seconds from \(range.lowerBound) to \(range.upperBound); got '\(raw)'.",
                command: command)
        }
        return number
    }

    public func unknown(_ option: String) -> UsageError {
        UsageError("Unknown option '\(option)'.", command: command)
    }

    private func isNegativeNumber(_ text: String) -> Bool { Double(text) != nil }
}
