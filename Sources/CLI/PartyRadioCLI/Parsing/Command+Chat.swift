import PartyRadioCore

extension Command {
    /// `partyradio chat MESSAGE... [options]`
    public struct ChatOptions: Equatable, Sendable {
        /// The line, 1–280 characters of plain text (several words are one line).
        public var text: String
        /// `--station S`: name, unique name prefix or ID; nil: the only station on the air.
        public var station: String?
        /// `--as NAME`: the name shown with the line; nil: `user@host`.
        public var displayName: GuestName?
        /// `--timeout S`: give up after this long (exit code 3).
        public var timeout: Double = 10
        /// `--json`: the result as JSON.
        public var json = false
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseChat(_ arguments: [String]) throws(UsageError) -> ChatOptions {
        var scanner = ArgumentScanner(arguments, command: "chat")
        var options = ChatOptions(text: "")
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            switch option {
            case "--station", "-s": options.station = try scanner.value(for: option)
            case "--as": options.displayName = try guestName(scanner.value(for: option), command: "chat")
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        let raw = scanner.positionals.joined(separator: " ")
        guard let text = ChatBook.validText(raw) else {
            let count = GuestName.cleaned(raw).count
            throw UsageError(
                count == 0
                    ? "Say something: 'partyradio chat great track!'."
                    : "A chat line has at most \(ChatSend.Limit.characters) characters; this one has \(count).",
                command: "chat")
        }
        options.text = text
        return options
    }
}
