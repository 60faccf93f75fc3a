/// How the live views look on this terminal: whether they redraw in place at all, and whether they
/// use colour.
///
/// A redraw needs a terminal that moves its cursor: stdout a terminal, and `TERM` not `dumb`;
/// otherwise the views print one plain line per change. Colour follows no-color.org: `NO_COLOR`
/// set to anything but the empty string turns it off (the view still redraws in place).
struct TerminalStyle: Sendable {
    /// Whether the live views redraw in place (else they print lines).
    var redraws: Bool
    /// Whether the live views use colour.
    var colors: Bool

    static let reset = "\u{1B}[0m"

    init(redraws: Bool, colors: Bool) {
        self.redraws = redraws
        self.colors = redraws && colors
    }

    /// The style for `console` in `environment`.
    init(console: Console, environment: [String: String]) {
        let dumb = environment["TERM"] == "dumb"
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        self.init(redraws: console.isTerminal && !dumb, colors: !noColor)
    }

    func bold(_ text: String) -> String { styled(text, "1") }
    func dim(_ text: String) -> String { styled(text, "2") }
    func green(_ text: String) -> String { styled(text, "32") }
    func red(_ text: String) -> String { styled(text, "31") }
    func inverse(_ text: String) -> String { styled(text, "7") }

    private func styled(_ text: String, _ code: String) -> String {
        colors && !text.isEmpty ? "\u{1B}[\(code)m" + text + Self.reset : text
    }
}
