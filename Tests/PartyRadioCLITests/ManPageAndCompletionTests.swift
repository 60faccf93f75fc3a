import Foundation
import Testing

@testable import PartyRadioCLI

/// The man page and the completion scripts are made from the help pages: every command and
/// every option `--help` shows must be in them, and the scripts must be valid shell.
@Suite struct ManPageAndCompletionTests {
    static let everyCommand = Command.names + Command.setupNames

    @Test func theTopLevelPageListsEveryCommandOnce() {
        #expect(HelpPages.commandSummaries.map(\.name) == Self.everyCommand)
        for (name, summary) in HelpPages.commandSummaries {
            #expect(!summary.isEmpty && HelpPages.page(for: name) != nil, "\(name)")
        }
    }

    @Test func theManPageHasEveryCommandAndOption() throws {
        let page = ManPage.render(version: "9.8.7")
        #expect(page.hasPrefix(#".TH PARTYRADIO 1 "" "partyradio 9.8.7""#))
        for name in Self.everyCommand {
            let help = try #require(HelpPages.page(for: name))
            let start = try #require(page.range(of: #".SH "PARTYRADIO \#(name.uppercased())""#), "\(name)")
            let end = page[start.upperBound...].range(of: "\n.SH ")?.lowerBound ?? page.endIndex
            let section = page[start.upperBound..<end]
            #expect(section.contains(ManPage.escape(help.overview)), "\(name)")
            for option in HelpOption.all(of: help) where option.flags != ["-h", "--help"] {
                for flag in option.flags {
                    #expect(section.contains(#"\fB\#(ManPage.escape(flag))\fR"#), "\(name) \(flag)")
                }
            }
            for (argument, _) in help.arguments {
                #expect(section.contains(ManPage.escape(argument)), "\(name) \(argument)")
            }
        }
        for common in ["--state-dir", "--verbose", "--version"] {
            #expect(page.contains(#"\fB\#(ManPage.escape(common))\fR"#))
        }
        // No line starts with a character roff would take for a request.
        for line in page.split(separator: "\n") where line.first == "'" {
            Issue.record("line starts with a quote: \(line)")
        }
        #expect(ManPage.escape(".x - \\") == #"\&.x \- \e"#)
    }

    @Test func theManPageIsCleanForMan() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-\(getpid()).1")
        try ManPage.render(version: "1.0").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try runTool("/usr/bin/man", ["--warnings", "-E", "UTF-8", "-l", file.path])
        #expect(status == 0)
        #expect(!output.contains("warning"), "\(output)")
        #expect(output.contains("PARTYRADIO DJ") && output.contains("--voters-per-address"))
    }

    @Test func completionScriptsOfferEveryCommandAndOption() throws {
        let bash = CompletionScript.render(for: .bash)
        let zsh = CompletionScript.render(for: .zsh)
        for name in Self.everyCommand {
            let prefix = "        \(name)) opts=\""
            let line = try #require(bash.split(separator: "\n").first { $0.hasPrefix(prefix) }, "\(name)")
            let words = line.dropFirst(prefix.count).prefix { $0 != "\"" }.split(separator: " ")
            #expect(words.contains("--version"))
            #expect(zsh.contains("    \(name)) _arguments"), "\(name)")
            for option in HelpOption.all(of: try #require(HelpPages.page(for: name))) {
                for flag in option.flags {
                    #expect(words.contains(Substring(flag)), "\(name) \(flag)")
                    #expect(zsh.contains("'\(flag)["), "\(name) \(flag)")
                }
            }
        }
        #expect(bash.contains("--library|") || bash.contains("|--library"))
        #expect(zsh.contains("--station[") && zsh.contains(":station:_partyradio_stations"))
        #expect(try runTool("/bin/bash", ["-n", "-c", bash]).status == 0)
        #expect(try runTool("/usr/bin/zsh", ["-n", "-c", zsh]).status == 0)
    }

    @Test func bashCompletesCommandsAndOptions() throws {
        let script =
            CompletionScript.render(for: .bash) + """
                COMP_WORDS=(partyradio li); COMP_CWORD=1; _partyradio; echo "${COMPREPLY[*]}"
                COMP_WORDS=(partyradio dj --voter); COMP_CWORD=2; _partyradio; echo "${COMPREPLY[*]}"
                COMP_WORDS=(partyradio completion ''); COMP_CWORD=2; _partyradio; echo "${COMPREPLY[*]}"
                """
        let (status, output) = try runTool("/bin/bash", ["-c", script])
        #expect(status == 0)
        #expect(output == "listen\n--voters-per-address\nbash zsh\n")
    }

    @Test func parsing() throws {
        #expect(try Command.parse(["man"]) == .manPage)
        #expect(try Command.parse(["completion", "zsh"]) == .completion(.zsh))
        #expect(throws: UsageError.self) { try Command.parse(["completion", "fish"]) }
        #expect(throws: UsageError.self) { try Command.parse(["completion"]) }
        #expect(throws: UsageError.self) { try Command.parse(["man", "--bogus"]) }
        #expect(try Command.parse(["man", "--help"]) == .help("man"))
        // --version on every command, wherever it stands (but not after --).
        for name in Self.everyCommand {
            #expect(try Command.parse([name, "--version"]) == .version, "\(name)")
        }
        #expect(try Command.parse(["dj", "--name", "x", "--version"]) == .version)
        #expect(try Command.parse(["chat", "--", "--version"]) != .version)
    }

    @Test func theCommandsPrintToStdout() async {
        let man = await runCLI("man", [])
        #expect(man.code == 0 && man.out.hasPrefix(".TH PARTYRADIO 1") && man.err.isEmpty)
        let bash = await runCLI("completion", ["bash"])
        #expect(bash.code == 0 && bash.out.hasSuffix("complete -F _partyradio partyradio"))
        let version = await runCLI("stations", ["--version"])
        #expect(version.code == 0 && version.out == "partyradio \(PartyRadio.version)")
        let bad = await runCLI("completion", ["fish"])
        #expect(bad.code == 2 && bad.err.contains("bash or zsh; got 'fish'"))
    }

    private func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "MANWIDTH": "100", "LANG": "C.UTF-8"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
