/// partyradio(1), in roff, made from ``HelpPages``: the same words as `--help`, so the two cannot
/// drift apart. `partyradio man` prints it; the Debian package installs it.
enum ManPage {
    /// The whole page.
    static func render(version: String) -> String {
        var out = [
            #".TH PARTYRADIO 1 "" "partyradio \#(version)" "User Commands""#,
            ".SH NAME",
            #"partyradio \- a peer-to-peer party radio for the local network"#,
            ".SH SYNOPSIS",
            #".B partyradio"#,
            #"\fIcommand\fR [\fIoptions\fR]"#,
            ".SH DESCRIPTION",
        ]
        out += paragraphs(section("OVERVIEW:", until: "USAGE:"))
        out += [".SH COMMANDS"]
        for (name, summary) in HelpPages.commandSummaries {
            out += [".TP", #".B \#(escape(name))"#, escape(summary)]
        }
        out += [".SH COMMON OPTIONS"]
        out += options(CommonOptions.help + [("--version", "Print partyradio's version.")])
        for (name, _) in HelpPages.commandSummaries {
            guard let page = HelpPages.page(for: name) else { continue }
            out += [#".SH "PARTYRADIO \#(name.uppercased())""#]
            out += [escape(page.overview), ".PP", ".nf"]
            out += page.usage.split(separator: "\n").map { escape(String($0).trimmingLeadingSpaces) }
            out += [".fi"]
            if !page.arguments.isEmpty {
                out += [".SS Arguments"]
                for (argument, text) in page.arguments { out += [".TP", #".I \#(escape(argument))"#, escape(text)] }
            }
            if page.options.count > 1 {
                out += [".SS Options"]
                out += options(page.options)
            }
            if let discussion = page.discussion {
                out +=
                    [".PP", ".nf"]
                    + discussion.split(separator: "\n", omittingEmptySubsequences: false).map {
                        escape(String($0))
                    } + [".fi"]
            }
        }
        out += [".SH FILES"]
        out += paragraphs(HelpPages.files)
        out += [".SH ENVIRONMENT"]
        out += paragraphs(HelpPages.environment)
        out += knobs(EnvironmentKnobs.table.filter { $0.stability == .stable })
        out += [".SS Experimental", ".PP", escape(Self.experimental)]
        out += knobs(EnvironmentKnobs.table.filter { $0.stability == .experimental })
        out += [".SH EXIT STATUS"]
        out += paragraphs(section("EXIT CODES:", until: nil))
        out += [".SH SEE ALSO", #"\fBavahi-daemon\fR(8), \fBmpv\fR(1)"#]
        return out.joined(separator: "\n") + "\n"
    }

    /// What the experimental variables are for.
    static let experimental =
        "Switches for comparisons in the benchmarks and tests (docs/BENCHMARKS.md): they may change or go without notice."

    /// `.TP` rows, the variable's name bold, its default after its meaning.
    private static func knobs(_ rows: [EnvironmentKnobs.Knob]) -> [String] {
        rows.flatMap { knob in
            [".TP", #".B \#(escape(knob.name))"#, escape("\(knob.meaning) Default: \(knob.defaultValue).")]
        }
    }

    /// `.TP` rows, the flags bold and the value italic.
    private static func options(_ rows: [(String, String)]) -> [String] {
        rows.map(HelpOption.init(row:)).flatMap { option -> [String] in
            let flags = option.flags.map { #"\fB\#(escape($0))\fR"# }.joined(separator: ", ")
            let value = option.value.map { #" \fI\#(escape($0))\fR"# } ?? ""
            return [".TP", flags + value, escape(option.text)]
        }
    }

    /// The top-level page's text from the line starting with `start` up to the one starting with `end`.
    private static func section(_ start: String, until end: String?) -> String {
        let lines = HelpPages.topLevel.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(where: { $0.hasPrefix(start) }) else { return "" }
        let rest = lines[first...]
        let last = end.flatMap { end in rest.firstIndex(where: { $0.hasPrefix(end) }) } ?? rest.endIndex
        var text = rest[rest.startIndex..<last].joined(separator: "\n")
        text.removeFirst(start.count)
        return text
    }

    /// Blank-line separated paragraphs as `.PP` blocks, their lines joined.
    private static func paragraphs(_ text: String) -> [String] {
        var out: [String] = []
        var current: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) + [""] {
            let trimmed = line.trimmingLeadingSpaces
            if trimmed.isEmpty {
                if !current.isEmpty { out += [".PP", escape(current.joined(separator: " "))] }
                current = []
            } else {
                current.append(trimmed)
            }
        }
        return out
    }

    /// Text safe in roff: backslashes and minus signs escaped, no line starting with a control character.
    static func escape(_ text: String) -> String {
        var escaped = text.replacingAll("\\", with: #"\e"#).replacingAll("-", with: #"\-"#)
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = #"\&"# + escaped }
        return escaped
    }
}

extension String {
    fileprivate var trimmingLeadingSpaces: String { String(drop(while: { $0 == " " })) }

    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
