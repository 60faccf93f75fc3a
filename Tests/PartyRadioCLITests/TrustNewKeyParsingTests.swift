import Testing

@testable import PartyRadioCLI

/// `--trust-new-key` on every command that talks to a station, as on `listen`: a station whose key
/// changed under a pinned name is refused by all of them alike, and accepted by all with it.
@Suite struct TrustNewKeyParsingTests {
    func network(_ arguments: [String]) throws -> NetworkOptions? {
        switch try Command.parse(arguments) {
        case .vote(let options): options.network
        case .chat(let options): options.network
        case .request(let options): options.network
        case .queue(let options): options.network
        default: nil
        }
    }

    @Test func everyGuestCommandTakesIt() throws {
        for arguments in [["vote", "up"], ["chat", "hello"], ["request", "Song"], ["queue"]] {
            #expect(try network(arguments)?.trustNewKey == false, "\(arguments)")
            #expect(try network(arguments + ["--trust-new-key"])?.trustNewKey == true, "\(arguments)")
        }
        guard case .listen(let listen) = try Command.parse(["listen", "--trust-new-key"]) else {
            Issue.record("not a listen command")
            return
        }
        #expect(listen.trustNewKey)
    }

    @Test func commandsThatPinNothingRefuseIt() {
        for arguments in [["stations", "--trust-new-key"], ["dj", "--name", "x", "--trust-new-key"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try Command.parse(arguments) }
        }
    }

    @Test func theGuestCommandsHelpShowsIt() {
        for help in [HelpPages.vote, HelpPages.chat, HelpPages.request, HelpPages.queue, HelpPages.listen] {
            #expect(help.options.contains { $0.0 == "--trust-new-key" })
        }
        #expect(!HelpPages.stations.options.contains { $0.0 == "--trust-new-key" })
    }
}
