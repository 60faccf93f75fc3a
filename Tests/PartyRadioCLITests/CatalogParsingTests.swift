import PartyRadioCatalog
import Testing

@testable import PartyRadioCLI

/// The catalog commands through the one parser, ``Command/parse(_:environment:knobs:)``.
@Suite struct CatalogParsingTests {
    let environment = ["LANG": "en_GB.UTF-8", "HOME": "/home/dj"]

    /// Parses with `environment` and its knobs, as a command's context hands them over.
    func parse(_ command: String, _ arguments: [String], _ environment: [String: String]? = nil) throws(UsageError)
        -> Command
    {
        let environment = environment ?? self.environment
        return try Command.parse(
            [command] + arguments, environment: environment, knobs: EnvironmentKnobs(environment))
    }

    func usageError(_ command: String, _ arguments: [String], _ environment: [String: String]? = nil) -> UsageError? {
        do {
            _ = try parse(command, arguments, environment)
            return nil
        } catch { return error }
    }

    @Test func searchDefaults() throws {
        guard case .search(let options) = try parse("search", ["daft", "punk"]) else {
            Issue.record("not a search")
            return
        }
        #expect(options.term == "daft punk")
        #expect(options.country == "gb")  // from LANG
        #expect(options.limit == 50)
        #expect(options.allowExplicit)
        #expect(!options.appleMusic)
        #expect(options.service.iTunesURL == "https://itunes.apple.com")
        #expect(options.service.appleMusicURL == "https://api.music.apple.com")
        #expect(options.common == CommonOptions())  // the state directory is resolved when the command runs
        #expect(!options.service.json && !options.service.refresh && options.service.useCache)
    }

    @Test func searchEveryOption() throws {
        let env = environment.merging(
            ["XDG_STATE_HOME": "/state", "PARTYRADIO_ITUNES_URL": "http://127.0.0.1:1"]) { _, new in new }
        guard
            case .search(let options) = try parse(
                "search",
                [
                    "--country", "FR", "--limit=200", "--no-explicit", "--json", "--refresh", "--timeout", "2.5",
                    "--artwork-size", "1200", "-v", "AC/DC", "&", "friends", "--no-cache", "--state-dir", "/s",
                ], env)
        else {
            Issue.record("not a search")
            return
        }
        #expect(options.term == "AC/DC & friends")
        #expect(options.country == "fr")
        #expect(options.limit == 200)
        #expect(!options.allowExplicit)
        #expect(options.service.json && options.service.refresh && !options.service.useCache)
        #expect(options.common == CommonOptions(stateDir: "/s", verbose: true))
        #expect(options.service.timeout == 2.5)
        #expect(options.service.artworkSize == 1200)
        #expect(options.service.iTunesURL == "http://127.0.0.1:1")
        guard case .search(let flagged) = try parse("search", ["x", "--itunes-url", "http://127.0.0.1:2/"], env) else {
            return
        }
        #expect(flagged.service.iTunesURL == "http://127.0.0.1:2/")  // the flag beats the environment
    }

    @Test func searchUsageErrors() {
        #expect(usageError("search", [])?.message == "Give a search term, e.g. 'partyradio search daft punk'.")
        #expect(usageError("search", ["x", "--limit", "0"])?.message.contains("from 1 to 200") == true)
        #expect(usageError("search", ["x", "--limit", "201"])?.message.contains("got '201'") == true)
        #expect(usageError("search", ["x", "--limit"])?.message == "Missing value for '--limit'.")
        #expect(usageError("search", ["x", "--country", "usa"])?.message.contains("two-letter") == true)
        #expect(usageError("search", ["x", "--bogus"])?.message == "Unknown option '--bogus'.")
        #expect(usageError("search", ["x", "--itunes-url", "ftp://x"])?.message.contains("http(s) URL") == true)
        #expect(usageError("search", ["x", "--types", "songs"])?.message == "'--types' works with --apple-music only.")
        #expect(usageError("search", ["x", "--limit", "0"])?.hint == "See 'partyradio search --help'.")
        #expect(usageError("search", ["x", "--state-dir", ""])?.message == "'--state-dir' needs a directory.")
        // --interface is for the commands on the network.
        #expect(usageError("search", ["x", "--interface", "eth0"])?.message == "Unknown option '--interface'.")
    }

    @Test func appleMusicSearch() throws {
        #expect(usageError("search", ["x", "--apple-music"])?.message.contains("needs a developer token") == true)
        #expect(
            usageError("search", ["x", "--apple-music", "--key", "k.p8", "--team", "ABCDE12345"])?.message
                .contains("--key-id") == true)
        #expect(
            usageError("search", ["x", "--apple-music", "--developer-token", "t", "--limit", "26"])?.message
                .contains("1 to 25") == true)
        #expect(usageError("search", ["x", "--apple-music", "--developer-token", "t", "--types", "albums"]) != nil)
        guard
            case .search(let options) = try parse(
                "search", ["x", "--apple-music", "--types", "songs,playlists"],
                environment.merging(["PARTYRADIO_APPLE_MUSIC_TOKEN": "a.b.c", "PARTYRADIO_MUSIC_USER_TOKEN": "u"]) {
                    $1
                })
        else { return }
        #expect(options.appleMusic)
        #expect(options.limit == 25)
        #expect(options.types == ["songs", "playlists"])
        #expect(options.auth.developerToken == "a.b.c")
        #expect(options.auth.musicUserToken == "u")
    }

    @Test func lookupIDs() throws {
        guard case .lookup(let options) = try parse("lookup", ["617154366,697195462", "617154366", "1440935467"])
        else { return }
        #expect(options.ids == ["617154366", "697195462", "1440935467"])
        #expect(usageError("lookup", [])?.message.contains("one or more track IDs") == true)
        #expect(usageError("lookup", ["abc"])?.message == "Track IDs are numbers such as 617154366; got 'abc'.")
        #expect(
            usageError("lookup", ["--playlist", "pl.abc"])?.message == "'--playlist' works with --apple-music only.")
        #expect(usageError("lookup", ["--apple-music", "--developer-token", "t", "--playlist", "x"]) != nil)
        guard
            case .lookup(let playlist) = try parse(
                "lookup", ["--apple-music", "--developer-token", "t", "--playlist", "pl.abc123"])
        else { return }
        #expect(playlist.playlist == "pl.abc123" && playlist.ids.isEmpty)
    }

    @Test func charts() throws {
        guard case .charts(let options) = try parse("charts", ["--country", "de", "--limit", "10"]) else { return }
        #expect(options.country == "de" && options.limit == 10)
        guard case .charts(let defaults) = try parse("charts", [], [:]) else { return }
        #expect(defaults.country == "us" && defaults.limit == 25)
        #expect(usageError("charts", ["pop"])?.message.contains("takes no arguments") == true)
        #expect(usageError("charts", ["--limit", "500"]) != nil)
    }

    @Test func token() throws {
        let base = ["--key", "AuthKey.p8", "--team", "ABCDE12345", "--key-id", "KEY1234567"]
        guard case .token(let options) = try parse("token", base) else { return }
        #expect(
            options
                == Command.TokenOptions(
                    keyPath: "AuthKey.p8", teamID: "ABCDE12345", keyID: "KEY1234567", lifetimeDays: 30))
        guard case .token(let verbose) = try parse("token", base + ["-v"]) else { return }
        #expect(verbose.common.verbose)
        guard case .token(let longest) = try parse("token", base + ["--ttl", "180"]) else { return }
        #expect(longest.lifetimeDays == 180)
        #expect(usageError("token", base + ["--ttl", "181"])?.message.contains("at most 180 days") == true)
        #expect(usageError("token", base + ["--ttl", "0"]) != nil)
        #expect(usageError("token", base + ["--ttl", "1.5"]) != nil)
        #expect(
            usageError("token", ["--team", "ABCDE12345", "--key-id", "KEY1234567"])?.message.contains("--key") == true)
        #expect(
            usageError("token", ["--key", "k", "--team", "abc", "--key-id", "KEY1234567"])?.message
                == "'--team' takes your 10-character Team ID (capital letters and digits); got 'abc'.")
        #expect(
            usageError("token", ["--key", "k", "--key-id", "KEY1234567"])?.message
                == "Pass your Apple Developer Team ID with --team (10 characters, e.g. ABCDE12345).")
        #expect(
            usageError("token", ["--key", "k", "--team", "ABCDE12345", "--key-id", "key1"])?.message
                == "'--key-id' takes the key's 10-character ID (capital letters and digits); got 'key1'.")
        #expect(
            usageError("token", ["--key", "k", "--team", "ABCDE12345"])?.message
                == "Pass the key's 10-character ID with --key-id (it is in the AuthKey_<ID>.p8 file name).")
        guard
            case .token(let fromEnvironment) = try parse(
                "token", [],
                [
                    "PARTYRADIO_APPLE_MUSIC_KEY": "/k.p8", "PARTYRADIO_APPLE_MUSIC_TEAM_ID": "ABCDE12345",
                    "PARTYRADIO_APPLE_MUSIC_KEY_ID": "KEY1234567",
                ])
        else { return }
        #expect(fromEnvironment.keyPath == "/k.p8")
    }

    @Test func helpEverywhere() throws {
        for command in ["search", "lookup", "charts", "token"] {
            #expect(try parse(command, ["--help"]) == .help(command))
            #expect(try parse(command, ["-h", "--bogus"]) == .help(command))
        }
        // After `--`, `--help` is a search term.
        guard case .search(let options) = try parse("search", ["--", "--help"]) else {
            Issue.record("not a search")
            return
        }
        #expect(options.term == "--help")
    }
}
