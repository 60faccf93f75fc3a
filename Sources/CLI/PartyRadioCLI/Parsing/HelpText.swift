/// A command's help page in the swift-argument-parser layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS.
public struct HelpText: Sendable {
    /// One sentence: what the command does.
    public var overview: String
    /// The synopsis lines, `partyradio <command> …`.
    public var usage: String
    /// Positional arguments and what they mean.
    public var arguments: [(String, String)]
    /// Options and what they do; `-h, --help` is always the last.
    public var options: [(String, String)]
    /// Free text after the options (e.g. the DJ's controls).
    public var discussion: String?

    /// A page; `-h, --help` is added to `options`.
    public init(
        overview: String, usage: String, arguments: [(String, String)] = [], options: [(String, String)],
        discussion: String? = nil
    ) {
        self.overview = overview
        self.usage = usage
        self.arguments = arguments
        self.options = options + [("-h, --help", "Show help information.")]
        self.discussion = discussion
    }

    /// The page as printed: sections in order, descriptions aligned.
    public var rendered: String {
        var lines = ["OVERVIEW: \(overview)", "", "USAGE: \(usage)", ""]
        func section(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            lines.append(title)
            let width = min(28, (rows.map(\.0.count).max() ?? 0) + 2)
            for (name, text) in rows {
                let padded =
                    name.count + 2 > width
                    ? name + "\n" + String(repeating: " ", count: width + 2)
                    : name + String(repeating: " ", count: width - name.count)
                lines.append("  " + padded + text)
            }
            lines.append("")
        }
        section("ARGUMENTS:", arguments)
        section("OPTIONS:", options)
        if let discussion { lines += [discussion, ""] }
        return lines.joined(separator: "\n")
    }
}
