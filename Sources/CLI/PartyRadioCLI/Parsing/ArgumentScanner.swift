import PartyRadioCatalog

/// Walks a command's arguments in the style of swift-argument-parser: `--flag`, `--option value`,
/// `--option=value`, `-x` short forms, and positionals. Pure: no I/O, unit-tested.
public struct ArgumentScanner: Sendable {
    private var arguments: [String]
    private var position = 0
    /// The command being parsed, named in the errors' help hint.
    public let command: String
    /// The arguments that are not options, in order; complete once ``nextOption()`` returned nil.
    public private(set) var positionals: [String] = []

    /// A scanner over `arguments` (the words after the command name).
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

    /// The value that follows option `name` when one does (not another option; `-` is a value, as
    /// standard input); nil when the option stands alone.
    public mutating func optionalValue(for name: String) -> String? {
        guard position < arguments.count else { return nil }
        let next = arguments[position]
        guard next == "-" || !next.hasPrefix("-") || isNegativeNumber(next) else { return nil }
        position += 1
        return next
    }

    /// A whole number in `range`.
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

    /// A number of seconds in `range`.
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

    /// A two-letter storefront country code (`--country`), lowercased.
    public mutating func country(for name: String) throws(UsageError) -> String {
        let raw = try value(for: name)
        guard let code = Storefront.normalized(raw) else {
            throw UsageError(
                "'\(name)' takes a two-letter country code such as us or gb; got '\(raw)'.", command: command)
        }
        return code
    }

    /// An http(s) base URL (`--itunes-url`, `--apple-music-url`).
    public mutating func url(for name: String) throws(UsageError) -> String {
        let raw = try value(for: name)
        guard raw.hasPrefix("http://") || raw.hasPrefix("https://"), raw.count > 8 else {
            throw UsageError(
                "'\(name)' takes an http(s) URL such as http://127.0.0.1:8080; got '\(raw)'.", command: command)
        }
        return raw
    }

    /// The error for an option this command does not take.
    public func unknown(_ option: String) -> UsageError {
        UsageError("Unknown option '\(option)'.", command: command)
    }

    private func isNegativeNumber(_ text: String) -> Bool { Double(text) != nil }
}
