import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

/// `dj --private`/`--new-code` and the guests' `--code`.
@Suite struct PrivateParsingTests {
    func usageError(_ arguments: [String]) -> UsageError? {
        do {
            _ = try Command.parse(arguments)
            return nil
        } catch { return error }
    }

    @Test func theDJMakesItsOwnCode() throws {
        guard case .dj(let options) = try Command.parse(["dj", "--name", "x", "--private", "--new-code"]) else {
            Issue.record("not a dj command")
            return
        }
        #expect(options.isPrivate && options.newCode)
        #expect(usageError(["dj", "--name", "x", "--new-code"])?.message.contains("add --private") == true)
        #expect(usageError(["dj", "--name", "x", "--code", "K7QX-3MZD-9TRFA"])?.message.contains("--private") == true)
    }

    @Test func guestsTakeTheCodeAsTyped() throws {
        let code = try JoinCode(parsing: "K7QX-3MZD-9TRFA")
        guard case .listen(let listen) = try Command.parse(["listen", "--code", "k7qx3mzd9trfa"]) else {
            Issue.record("not a listen command")
            return
        }
        #expect(listen.network.code == code)
        for command in [["vote", "up"], ["chat", "hi"], ["request", "x"], ["queue"], ["stations"]] {
            #expect(throws: Never.self, "\(command)") { try Command.parse(command + ["--code", "K7QX-3MZD-9TRFA"]) }
        }
        let bad = usageError(["vote", "up", "--code", "K7QX-3MZD"])
        #expect(bad?.message.contains("13 letters and digits like K7QX-3MZD-9TRFA; got 'K7QX-3MZD'") == true)
        #expect(usageError(["doctor", "--code", "K7QX-3MZD-9TRFA"]) != nil)
    }
}
