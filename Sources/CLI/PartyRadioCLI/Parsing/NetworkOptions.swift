/// Options of the commands that go on the network (`dj`, `listen`, `stations`, `vote`).
public struct NetworkOptions: Equatable, Sendable {
    /// `--interface NAME`; nil: the default route's interface, else the first multicast-capable one.
    public var interface: String?

    /// The options as given.
    public init(interface: String? = nil) {
        self.interface = interface
    }

    static let help: [(String, String)] = [
        ("--interface <name>", "Network interface to use (default: the default route's).")
    ]

    /// Consumes `option` if it is a network one; returns false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--interface": interface = try scanner.value(for: option)
        default: return false
        }
        return true
    }
}
