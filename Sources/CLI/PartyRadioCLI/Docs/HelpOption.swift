/// One row of a help page's OPTIONS, taken apart for the man page and the completion scripts:
/// `-n, --name <name>` is the flags `-n` and `--name` and the value `name`.
struct HelpOption: Equatable, Sendable {
    /// Every spelling, short first (`-n`, `--name`).
    var flags: [String]
    /// What the value is called (`name`, `dir`); nil for a flag that takes none.
    var value: String?
    /// The help text.
    var text: String

    init(row: (String, String)) {
        let (spec, text) = row
        let parts = spec.split(separator: " ", maxSplits: 1)
        let names = parts.first.map(String.init) ?? spec
        var flags: [String] = []
        var value: String?
        for word in spec.split(separator: " ") {
            if word.hasPrefix("<") {
                value = String(word.dropFirst().prefix(while: { $0 != ">" }))
            } else if word.hasPrefix("-") {
                flags.append(String(word.hasSuffix(",") ? word.dropLast() : word))
            }
        }
        self.flags = flags.isEmpty ? [names] : flags
        self.value = value
        self.text = text
    }

    /// Whether the value names a folder (completed with directories).
    var takesDirectory: Bool { value == "dir" }
    /// Whether the value names a file (completed with files).
    var takesFile: Bool { value.map { $0.hasPrefix("file") || $0.hasSuffix(".p8") } ?? false }
    /// Whether the value is a station (completed with the stations on the LAN).
    var takesStation: Bool { value == "station" }
    /// Whether the value is a network interface.
    var takesInterface: Bool { flags.contains("--interface") }

    /// The options of `page`.
    static func all(of page: HelpText) -> [HelpOption] { page.options.map(HelpOption.init(row:)) }
}
