import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

@Suite struct CommandParsingTests {
    func usage(_ arguments: [String]) -> UsageError? {
        do {
            _ = try Command.parse(arguments)
            return nil
        } catch { return error }
    }

    @Test func djNeedsAValidName() throws {
        let arguments = [
            "dj", "--name", " Rooftop ", "--library", "/a", "-l", "/b", "--no-audio", "--json-events", "--port", "4000",
            "--interface", "eth0", "--state-dir", "/tmp/s", "--country", "DE",
        ]
        guard case .dj(let options) = try Command.parse(arguments) else {
            Issue.record("not dj")
            return
        }
        #expect(options.name.value == "Rooftop")
        #expect(options.libraries == ["/a", "/b"])
        #expect(options.playback.noAudio && options.jsonEvents && options.port == 4000)
        #expect(options.network == NetworkOptions(interface: "eth0"))
        #expect(options.common == CommonOptions(stateDir: "/tmp/s"))
        #expect(options.country == "de")
        #expect(usage(["dj", "--name", "x", "--country", "deu"])?.message.contains("two-letter") == true)
        #expect(usage(["dj"])?.message.contains("--name") == true)
        #expect(usage(["dj", "--name", "   "])?.message.contains("empty") == true)
        #expect(usage(["dj", "--name", String(repeating: "x", count: 61)])?.message.contains("61") == true)
        // 32 accented letters pass the character count but not Avahi's 63 bytes: said before Avahi fails.
        #expect(
            usage(["dj", "--name", String(repeating: "é", count: 32)])?.message
                == "The station name takes 64 bytes of UTF-8; DNS-SD allows 63 (accented letters take 2 bytes, "
                + "emoji 4): shorten it.")
        #expect(usage(["listen", "--as", String(repeating: "🎸", count: 17)])?.message.contains("68 bytes") == true)
        #expect(usage(["dj", "--name=Roof", "--port", "70000"])?.message.contains("65535") == true)
        #expect(usage(["dj", "--name", "x", "--bogus"]) == UsageError("Unknown option '--bogus'.", command: "dj"))
        #expect(usage(["dj", "--name"])?.message == "Missing value for '--name'.")
        #expect(usage(["dj", "--name", "x", "--crowd-skip", "101"])?.message.contains("0 to 100") == true)
        guard case .dj(let crowd) = try Command.parse(["dj", "--name", "x", "--crowd-skip", "0"]) else {
            Issue.record("not dj")
            return
        }
        #expect(crowd.crowdSkipPercent == 0)
        #expect(Command.DJOptions(name: try StationName(validating: "x")).crowdSkipPercent == 50)
        let roofTop = Command.DJOptions(name: try StationName(validating: "Roof Top"))
        #expect(try Command.parse(["dj", "--name=Roof Top"]) == .dj(roofTop))
    }

    @Test func voteTakesAChoiceAndOptions() throws {
        #expect(try Command.parse(["vote", "up"]) == .vote(Command.VoteOptions(choice: .up)))
        let arguments = ["vote", "--station", "Roof", "DOWN", "--timeout", "2.5", "--json", "-v"]
        guard case .vote(let options) = try Command.parse(arguments) else {
            Issue.record("not vote")
            return
        }
        #expect(options.choice == .down && options.station == "Roof" && options.timeout == 2.5 && options.json)
        #expect(options.common.verbose)
        #expect(usage(["vote"])?.message.contains("up") == true)
        #expect(usage(["vote", "sideways"]) != nil)
        #expect(usage(["vote", "up", "down"]) != nil)
        #expect(usage(["vote", "up", "--timeout", "-1"])?.command == "vote")
        #expect(usage(["vote", "up", "--timeout", "nan"]) != nil)
    }

    @Test func listenAndStations() throws {
        #expect(try Command.parse(["listen"]) == .listen(Command.ListenOptions()))
        guard case .listen(let listen) = try Command.parse(["listen", "Roof", "--no-audio", "--timeout", "3"]) else {
            Issue.record("not listen")
            return
        }
        #expect(listen.station == "Roof" && listen.playback.noAudio && listen.timeout == 3)
        #expect(usage(["listen", "a", "b"]) != nil)
        guard case .stations(let stations) = try Command.parse(["stations", "-w", "--json", "--timeout", "1"]) else {
            Issue.record("not stations")
            return
        }
        #expect(stations.watch && stations.json && stations.timeout == 1)
        #expect(usage(["stations", "extra"])?.message == "Unexpected argument 'extra'.")
    }

    @Test func helpAndUnknownCommands() throws {
        #expect(try Command.parse([]) == .help(nil))
        #expect(try Command.parse(["--help"]) == .help(nil))
        #expect(try Command.parse(["vote", "--help"]) == .help("vote"))
        #expect(try Command.parse(["dj", "-h", "--bogus"]) == .help("dj"))
        #expect(usage(["party"])?.hint == "See 'partyradio --help'.")
        #expect(UsageError("x", command: "vote").hint == "See 'partyradio vote --help'.")
        #expect(try Command.parse(["help", "search"]) == .help("search"))
        #expect(try Command.parse(["--version"]) == .version)
        #expect(
            Command.names == [
                "dj", "stations", "listen", "speaker", "speakers", "speaker-set", "vote", "chat", "request", "queue",
                "stats", "search", "lookup", "charts", "token",
            ])
        #expect(
            try Command.parse(["chat", "great", "track!", "--as", "Bob"])
                == .chat(
                    Command.ChatOptions(text: "great track!", displayName: try GuestName(validating: "Bob"))))
        #expect(usage(["chat"])?.message.contains("Say something") == true)
        #expect(usage(["chat", String(repeating: "a", count: 281)])?.message.contains("at most 280") == true)
        for name in Command.names {
            #expect(try Command.parse([name, "--help"]) == .help(name))
            let page = try #require(HelpPages.page(for: name)).rendered
            #expect(page.contains("OVERVIEW:") && page.contains("USAGE: partyradio \(name)"))
            #expect(page.contains("OPTIONS:") && page.contains("-h, --help") && page.contains("-v, --verbose"))
            #expect(page.contains("--state-dir"))
            // The top-level page lists every command.
            #expect(HelpPages.topLevel.contains("\n  \(name) "))
        }
        #expect(HelpPages.page(for: "party") == nil)
    }

    /// `speakers` and `speaker-set` (docs/SPEAKERS.md): a name of several words, the three settings,
    /// a negative delay as a value; out of range refused with the range, as the DJ's own line is.
    @Test func speakersAndSpeakerSet() throws {
        #expect(try Command.parse(["speakers", "--json"]) == .speakers(Command.SpeakersOptions(json: true)))
        #expect(usage(["speakers", "Kitchen"])?.message == "Unexpected argument 'Kitchen'.")
        let cases: [([String], String, DJControl.SpeakerChange)] = [
            (["Kitchen", "volume", "20"], "Kitchen", .volume(20)),
            (["Living", "Room", "mute", "on"], "Living Room", .mute(true)),
            (["Kitchen", "delay", "-120"], "Kitchen", .delay(-120)),
            (["Kitchen", "delay", "500"], "Kitchen", .delay(500)),
        ]
        for (words, who, change) in cases {
            #expect(
                try Command.parse(["speaker-set"] + words)
                    == .speakerSet(Command.SpeakerSetOptions(who: who, change: change)), "\(words)")
        }
        #expect(
            usage(["speaker-set", "Kitchen", "volume", "101"])?.message
                == "A speaker's volume is 0 to 100; 101 is out of range.")
        #expect(
            usage(["speaker-set", "Kitchen", "delay", "-501"])?.message
                == "A speaker's delay trim is -500 to +500 ms; -501 is out of range.")
        #expect(usage(["speaker-set", "Kitchen"])?.message == DJControl.speakerUsage)
        #expect(usage(["speaker-set", "Kitchen", "volume", "20", "--loud"])?.message.contains("--loud") == true)
    }

    @Test func everyCommandHasTheCommonOptions() throws {
        let lines: [[String]] = [
            ["dj", "--name", "x"], ["listen"], ["stations"], ["vote", "up"], ["search", "x"], ["lookup", "1"],
            ["charts"], ["token", "--key", "k.p8", "--team", "ABCDE12345", "--key-id", "KEY1234567"], ["stats"],
            ["speakers"], ["speaker-set", "Kitchen", "volume", "3"],
        ]
        for line in lines {
            let command = try Command.parse(line + ["--verbose", "--state-dir", "/s"])
            #expect(command.common == CommonOptions(stateDir: "/s", verbose: true), "\(line)")
            #expect(command.name == line[0])
        }
        #expect(Command.help(nil).common == nil && Command.version.name == nil)
    }

    @Test func jsonIsEscaped() {
        let json = JSON.object([
            ("a", .string("q\"\\\n\u{1}é")), ("b", .array([.int(1), .null, .bool(true), .double(.nan)])),
        ])
        #expect(json.rendered == #"{"a":"q\"\\\n\u0001é","b":[1,null,true,null]}"#)
    }

    @Test func renderHelpers() {
        #expect(Render.time(Nanos.seconds(75)) == "1:15")
        #expect(Render.progressBar(5, 10, width: 4) == "[##--]")
        #expect(Render.voteBar(Tally(up: 1, down: 1), width: 4) == "+++---")
        #expect(Render.voteBar(Tally(), width: 2) == "+  -")
    }
}
