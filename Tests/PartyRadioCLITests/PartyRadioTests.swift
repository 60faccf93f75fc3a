import Testing

@testable import PartyRadioCLI

/// The one dispatcher: help, usage errors and the hint look the same for every command.
@Suite struct PartyRadioTests {
    @Test func everyCommandPrintsItsHelpToStdout() async {
        for name in Command.names {
            for flag in ["--help", "-h"] {
                let run = await runCLI(name, [flag])
                #expect(run.code == 0, "\(name) \(flag)")
                #expect(run.out.hasPrefix("OVERVIEW: "), "\(name) \(flag)")
                #expect(run.out.contains("USAGE: partyradio \(name)"))
                #expect(run.err.isEmpty)
            }
        }
        let top = await runCLI("--help", [])
        #expect(top.code == 0 && top.out.hasPrefix("OVERVIEW: A peer-to-peer party radio"))
        let helpCommand = await runCLI("help", ["charts"])
        #expect(helpCommand.code == 0 && helpCommand.out.contains("USAGE: partyradio charts"))
    }

    @Test func usageErrorsLookTheSameForEveryCommand() async {
        let dj = await runCLI("dj", [])
        #expect(dj.code == 2)
        #expect(dj.out.isEmpty)
        #expect(dj.err == "Error: A station needs a name: pass --name \"My Party\".\nSee 'partyradio dj --help'.")
        let charts = await runCLI("charts", ["pop"])
        #expect(charts.code == 2)
        #expect(charts.err.hasSuffix("\nSee 'partyradio charts --help'."))
        let vote = await runCLI("vote", ["up", "--bogus"])
        #expect(vote.err == "Error: Unknown option '--bogus'.\nSee 'partyradio vote --help'.")
    }

    @Test func unknownCommands() async {
        let run = await runCLI("party", [])
        #expect(run.code == 2)
        #expect(run.err == "Error: Unknown command 'party'.\nSee 'partyradio --help'.")
        let help = await runCLI("party", ["--help"])
        #expect(help.code == 2)
        #expect(help.err == "Error: Unknown command 'party'.\nSee 'partyradio --help'.")
        let version = await runCLI("--version", [])
        #expect(version.code == 0 && version.out == "partyradio \(PartyRadio.version)")
    }
}
