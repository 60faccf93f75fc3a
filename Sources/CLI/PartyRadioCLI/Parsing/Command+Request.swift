import PartyRadioCore

extension Command {
    /// `partyradio request QUERY... [options]`
    public struct RequestOptions: Equatable, Sendable {
        /// What to ask for: a catalog ID (all digits, or `--id`), title words of the DJ's library
        /// (`--library`), a catalog search on this node (`--search`, `--pick N`), or words, which
        /// are tried in the DJ's library first and then searched in the catalog.
        public var query: GuestTrackRequest.Query
        /// `--station S`: name, unique name prefix or ID; nil: the only station on the air.
        public var station: String?
        /// `--as NAME`: the name shown with the request; nil: `user@host`.
        public var displayName: GuestName?
        /// `--country CC` for the catalog search; nil: from the locale.
        public var country: String?
        /// `--no-explicit`: the catalog search leaves explicit tracks out.
        public var noExplicit = false
        /// `--timeout S`: give up after this long (exit code 3).
        public var timeout: Double = 10
        /// `--json`: the result as JSON.
        public var json = false
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseRequest(_ arguments: [String]) throws(UsageError) -> RequestOptions {
        var scanner = ArgumentScanner(arguments, command: "request")
        var options = RequestOptions(query: .catalogID(""))
        var how: String?
        var pick: Int?
        func choose(_ flag: String) throws(UsageError) {
            if let how, how != flag {
                throw UsageError("'\(how)' and '\(flag)' contradict each other; give one.", command: "request")
            }
            how = flag
        }
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            switch option {
            case "--station", "-s": options.station = try scanner.value(for: option)
            case "--as": options.displayName = try guestName(scanner.value(for: option), command: "request")
            case "--id", "--library", "--search": try choose(option)
            case "--pick": pick = try scanner.integer(for: option, in: 1...200)
            case "--country": options.country = try scanner.country(for: option)
            case "--no-explicit": options.noExplicit = true
            case "--timeout": options.timeout = try scanner.seconds(for: option)
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        let raw = scanner.positionals.joined(separator: " ")
        let text = GuestName.cleaned(raw)
        guard !text.isEmpty else {
            throw UsageError(
                "Say what to request: a catalog track ID, or words of a title, e.g. 'partyradio request get lucky'.",
                command: "request")
        }
        guard text == raw.trimmingWhitespace() else {
            throw UsageError("The request contains control characters; use plain text.", command: "request")
        }
        guard text.utf8.count <= RequestSend.Limit.query else {
            throw UsageError(
                "A request has at most \(RequestSend.Limit.query) bytes of text; this one has \(text.utf8.count).",
                command: "request")
        }
        let isID = text.allSatisfy { $0.isASCII && $0.isNumber }
        if let pick, how == "--id" || how == "--library" || (how == nil && isID) {
            throw UsageError(
                "'--pick \(pick)' chooses among catalog search results; it does not go with "
                    + (how ?? "a track ID") + ".", command: "request")
        }
        switch how {
        case "--id":
            guard isID, text.utf8.count <= StateSnapshot.Limit.trackID else {
                throw UsageError("'--id' takes a numeric catalog track ID; got '\(text)'.", command: "request")
            }
            options.query = .catalogID(text)
        case "--library": options.query = .library(text)
        case "--search": options.query = .search(text, pick: pick ?? 1)
        default:
            if pick != nil {
                options.query = .search(text, pick: pick ?? 1)
            } else if isID && text.utf8.count <= StateSnapshot.Limit.trackID {
                options.query = .catalogID(text)
            } else {
                options.query = .words(text, pick: 1)
            }
        }
        return options
    }
}
