/// A command's help page in the swift-argument-parser layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS.
public struct HelpText: Sendable {
    public var overview: String
    public var usage: String
    public var arguments: [(String, String)]
    public var options: [(String, String)]
    /// Free text after the options (e.g. the DJ's controls).
    public var discussion: String?

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

    public var rendered: String {
        var lines = ["OVERVIEW: \(overview)", "", "USAGE: \(usage)", ""]
        func section(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            lines.append(title)
            let width = min(28, (rows.map(\.0.count).max() ?? 0) + 2)
            for (name, text) in rows {
                let padded = name.count + 2 > width ? name + "\n" + String(repeating: " ", count: width + 2)
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
