import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

/// `request`, `queue`, `vote --request` and the DJ's request options, as parsed.
@Suite struct RequestParsingTests {
    func usage(_ arguments: [String]) -> UsageError? {
        do {
            _ = try Command.parse(arguments)
            return nil
        } catch { return error }
    }

    func request(_ arguments: [String]) throws -> Command.RequestOptions {
        guard case .request(let options) = try Command.parse(["request"] + arguments) else {
            throw UsageError("not request")
        }
        return options
    }

    @Test func digitsAreACatalogIDAndWordsTryTheLibraryFirst() throws {
        #expect(try request(["617154366"]).query == .catalogID("617154366"))
        #expect(try request(["get", "lucky"]).query == .words("get lucky", pick: 1))
        #expect(try request(["  get lucky  "]).query == .words("get lucky", pick: 1))
        // A number among words is words; a number longer than a track ID is searched for.
        #expect(try request(["99", "luftballons"]).query == .words("99 luftballons", pick: 1))
        #expect(
            try request([String(repeating: "1", count: 65)]).query == .words(String(repeating: "1", count: 65), pick: 1)
        )
        #expect(try request(["1999"]).query == .catalogID("1999"))
        #expect(try request(["--library", "1999"]).query == .library("1999"))
    }

    @Test func explicitFlagsSayWhereToLook() throws {
        #expect(try request(["--id", "617154366"]).query == .catalogID("617154366"))
        #expect(try request(["--library", "One", "More", "Time"]).query == .library("One More Time"))
        #expect(try request(["--search", "daft punk"]).query == .search("daft punk", pick: 1))
        #expect(try request(["daft punk", "--pick", "2"]).query == .search("daft punk", pick: 2))
        #expect(try request(["--search", "daft punk", "--pick", "3"]).query == .search("daft punk", pick: 3))
        let options = try request([
            "x", "--station", "Roof", "--as", "Bob", "--json", "--timeout", "3", "--country", "GB", "--no-explicit",
            "-v",
        ])
        #expect(options.station == "Roof" && options.displayName?.value == "Bob" && options.json)
        #expect(options.timeout == 3 && options.country == "gb" && options.noExplicit && options.common.verbose)
    }

    @Test func badRequestsAreUsageErrors() {
        #expect(usage(["request"])?.message.contains("Say what to request") == true)
        #expect(usage(["request", "   "])?.message.contains("Say what to request") == true)
        #expect(usage(["request", "a\u{1B}[2Jb"])?.message.contains("control characters") == true)
        #expect(usage(["request", String(repeating: "a", count: 201)])?.message.contains("at most 200 bytes") == true)
        #expect(usage(["request", "--id", "get lucky"])?.message.contains("numeric catalog track ID") == true)
        #expect(usage(["request", "--id", "1", "--library"])?.message.contains("contradict") == true)
        #expect(usage(["request", "--search", "--library", "x"])?.message.contains("contradict") == true)
        #expect(usage(["request", "--library", "x", "--pick", "2"])?.message.contains("--pick 2") == true)
        #expect(usage(["request", "617154366", "--pick", "2"])?.message.contains("track ID") == true)
        #expect(usage(["request", "x", "--pick", "0"])?.message.contains("1 to 200") == true)
        #expect(usage(["request", "x", "--as", ""])?.message.contains("empty") == true)
        #expect(usage(["request", "x", "--bogus"])?.command == "request")
    }

    @Test func queueTakesTheStationAndJSON() throws {
        #expect(try Command.parse(["queue"]) == .queue(Command.QueueOptions()))
        guard case .queue(let options) = try Command.parse(["queue", "-s", "Roof", "--json", "--timeout", "2"]) else {
            Issue.record("not queue")
            return
        }
        #expect(options.station == "Roof" && options.json && options.timeout == 2)
        #expect(usage(["queue", "Roof"])?.message == "Unexpected argument 'Roof'.")
    }

    @Test func voteOnARequest() throws {
        guard case .vote(let options) = try Command.parse(["vote", "down", "--request", "#3", "--json"]) else {
            Issue.record("not vote")
            return
        }
        #expect(options.choice == .down && options.request == 3 && options.json)
        #expect(try Command.parse(["vote", "up"]) == .vote(Command.VoteOptions(choice: .up)))
        #expect(usage(["vote", "up", "--request", "0"])?.message.contains("request's number") == true)
        #expect(usage(["vote", "up", "--request", "x"])?.message.contains("request's number") == true)
        #expect(usage(["vote", "up", "--request", "4294967296"]) != nil)
        #expect(usage(["vote", "up", "--request"])?.message == "Missing value for '--request'.")
    }

    @Test func theDJSetsTheModeAndTheLimit() throws {
        guard case .dj(let defaults) = try Command.parse(["dj", "--name", "x"]) else {
            Issue.record("not dj")
            return
        }
        #expect(defaults.requestMode == .open && defaults.maxRequestsPerGuest == 3)
        guard
            case .dj(let options) = try Command.parse([
                "dj", "--name", "x", "--requests", "Approve", "--max-requests", "5",
            ])
        else {
            Issue.record("not dj")
            return
        }
        #expect(options.requestMode == .approve && options.maxRequestsPerGuest == 5)
        #expect(usage(["dj", "--name", "x", "--requests", "maybe"])?.message.contains("open, approve or off") == true)
        #expect(usage(["dj", "--name", "x", "--max-requests", "0"])?.message.contains("1 to 100") == true)
    }

    @Test func helpPagesSayHowRequestsWork() throws {
        let request = try #require(HelpPages.page(for: "request")).rendered
        #expect(request.contains("--pick") && request.contains("--library") && request.contains("EXIT CODES"))
        #expect(try #require(HelpPages.page(for: "queue")).rendered.contains("vote up --request N"))
        #expect(try #require(HelpPages.page(for: "vote")).rendered.contains("--request <id>"))
        let dj = try #require(HelpPages.page(for: "dj")).rendered
        #expect(dj.contains("--requests <mode>") && dj.contains("--max-requests <n>"))
        #expect(dj.contains("approve N|next") && dj.contains("drop N|next") && dj.contains("a approve"))
    }
}
