import PartyRadioCore

/// Options of the commands that go on the network (`dj`, `listen`, `stations`, `vote`).
public struct NetworkOptions: Equatable, Sendable {
    /// `--interface NAME`; nil: the default route's interface, else the first multicast-capable one.
    public var interface: String?
    /// `--code CODE`: a private station's join code (guests' commands only; the DJ makes its own).
    public var code: JoinCode?
    /// `--domain NAME`: also publish or look for stations in this unicast DNS-SD domain.
    public var domain: String?
    /// `--dns-server ADDR[:PORT]` (IPv6: `ADDR` or `[ADDR]:PORT`): the DNS server for `--domain`.
    public var dnsServer: String?
    /// `--dns-key FILE` (the DJ): the TSIG key file that signs the DJ's updates.
    public var dnsKey: String?
    /// `--trust-new-key` (`vote`, `chat`, `request`, `queue`; `listen` has its own): accept a
    /// station that shows another key than the one this state directory met before.
    public var trustNewKey = false

    /// The options as given.
    public init(
        interface: String? = nil, code: JoinCode? = nil, domain: String? = nil, dnsServer: String? = nil,
        dnsKey: String? = nil
    ) {
        self.interface = interface
        self.code = code
        self.domain = domain
        self.dnsServer = dnsServer
        self.dnsKey = dnsKey
    }

    static let help: [(String, String)] = [
        ("--interface <name>", "Network interface to use (default: the default route's)."),
        ("--domain <name>", "Also use this unicast DNS-SD domain (stations beyond a router; see README, Networks)."),
        (
            "--dns-server <addr[:port]>",
            "The DNS server for --domain, IPv4 or IPv6 ([addr]:port) (default: the system's resolvers)."
        ),
    ]

    /// The DJ's extra option: the key that signs its DNS updates.
    static let djHelp: [(String, String)] =
        help + [("--dns-key <file>", "TSIG key file (BIND's format, from tsig-keygen) for --domain's updates.")]

    /// The options of guests' commands: with `--code`.
    static let guestHelp: [(String, String)] =
        [("--code <code>", "A private station's join code, as the DJ's terminal shows it (e.g. K7QX-3MZD-9TRFA).")]
        + help

    /// The guests' one-shot commands' extra option (`listen` lists its own).
    static let trustHelp: [(String, String)] = [
        ("--trust-new-key", "Accept a station that shows another key than the one met before (a DJ with a new key).")
    ]

    /// The commands that take ``trustNewKey`` here.
    static let trustingCommands: Set<String> = ["vote", "chat", "request", "queue"]

    /// Consumes `option` if it is a network one; returns false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--interface": interface = try scanner.value(for: option)
        case "--domain":
            let raw = try scanner.value(for: option)
            if let problem = DNSName.check(domain: raw) {
                throw UsageError(
                    "'--domain' takes a DNS domain like party.example: \(problem).", command: scanner.command)
            }
            domain = raw
        case "--dns-server": dnsServer = try scanner.value(for: option)
        case "--dns-key" where scanner.command == "dj": dnsKey = try scanner.value(for: option)
        case "--trust-new-key" where Self.trustingCommands.contains(scanner.command): trustNewKey = true
        case "--code":
            let raw = try scanner.value(for: option)
            do { code = try JoinCode(parsing: raw) } catch {
                throw UsageError(
                    "'--code' takes the join code the DJ's terminal shows: \(JoinCode.length) letters and digits "
                        + "like K7QX-3MZD-9TRFA; got '\(raw)'.", command: scanner.command)
            }
        default: return false
        }
        return true
    }
}
