import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioCLI

/// The defaults file: parsed strictly, applied only where the command line says nothing.
@Suite struct ConfigFileTests {
    let sample = """
        # my station
        name = Rooftop
        library = /music/a
        library = "/music/b with space "
        audio-driver = null
        guest-name = Ann
        no-audio = false
        """

    @Test func parsesKeysAndValues() throws {
        let file = try ConfigFile(parsing: sample)
        #expect(file.settings.map(\.key) == ["name", "library", "library", "audio-driver", "guest-name", "no-audio"])
        #expect(file.settings[2].value == "/music/b with space ")
    }

    @Test func badLinesAreClearErrors() {
        func message(_ text: String) -> String? {
            do { _ = try ConfigFile(parsing: text) } catch { return error.message }
            return nil
        }
        #expect(message("nmae = x")?.hasPrefix("line 1: unknown key 'nmae'; the keys are name, library") == true)
        #expect(message("\n\nname") == "line 3: expected 'key = value', got 'name'")
        #expect(message("name =  ") == "line 1: 'name' has no value")
        #expect(message("no-audio = yes") == "line 1: 'no-audio' is true or false; got 'yes'")
        #expect(message("name = a\nname = b") == "line 2: 'name' is set twice")
        #expect(message("library = a\nlibrary = b") == nil)
    }

    @Test func flagsOverrideTheFile() throws {
        let file = try ConfigFile(parsing: sample)
        #expect(
            file.arguments(for: "dj", given: [])
                == [
                    "--name", "Rooftop", "--library", "/music/a", "--library", "/music/b with space ", "--audio-driver",
                    "null",
                ])
        // A flag given replaces the setting, in any spelling; repeatable ones are replaced as a whole.
        #expect(file.arguments(for: "dj", given: ["-n", "Other", "--library=/x"]) == ["--audio-driver", "null"])
        #expect(file.arguments(for: "listen", given: []) == ["--audio-driver", "null", "--as", "Ann"])
        #expect(file.arguments(for: "listen", given: ["--", "--as"]) == ["--audio-driver", "null", "--as", "Ann"])
        #expect(file.arguments(for: "stats", given: []) == [])
        let quiet = try ConfigFile(parsing: "no-audio = true")
        #expect(quiet.arguments(for: "listen", given: []) == ["--no-audio"])
    }

    /// A live station and a station of files exclude each other (`dj` refuses both): the one the
    /// command line asks for wins over the file's other one, and the live tuning keys apply only
    /// to a live station, so neither file setting makes every other `dj` run an error.
    @Test func liveAndLibraryFromTheFileGiveWayToTheCommandLine() throws {
        let files = try ConfigFile(parsing: "library = /music/a\nlive-bitrate = 96")
        #expect(files.arguments(for: "dj", given: ["--live", "-"]) == ["--live-bitrate", "96"])
        #expect(files.arguments(for: "dj", given: []) == ["--library", "/music/a"])
        let live = try ConfigFile(parsing: "live = pipe:/tmp/snapfifo\nlive-frame-ms = 20")
        #expect(live.arguments(for: "dj", given: ["--library", "/x"]) == [])
        #expect(live.arguments(for: "dj", given: ["-l", "/x"]) == [])
        #expect(live.arguments(for: "dj", given: []) == ["--live", "pipe:/tmp/snapfifo", "--live-frame-ms", "20"])
        // The same through the parser: a plain `dj` and a live `dj` both run with either file.
        func parse(_ arguments: [String], _ text: String) throws(UsageError) -> Command {
            try Command.parse(
                arguments, environment: [:],
                config: { Result { () throws(ConfigFile.Error) in try ConfigFile(parsing: text) } },
                configPath: "/etc/partyradio/config")
        }
        guard case .dj(let plain) = try parse(["dj", "--name", "x"], "library = /music/a\nlive-bitrate = 96") else {
            throw Failure()
        }
        #expect(plain.live == nil && plain.libraries == ["/music/a"])
        guard case .dj(let onAir) = try parse(["dj", "--name", "x", "--live", "-"], "library = /music/a") else {
            throw Failure()
        }
        #expect(onAir.live != nil && onAir.libraries.isEmpty)
        guard case .dj(let files2) = try parse(["dj", "--name", "x", "--library", "/x"], "live = -") else {
            throw Failure()
        }
        #expect(files2.live == nil && files2.libraries == ["/x"])
    }

    @Test func commandsTakeTheirDefaults() throws {
        func parse(_ arguments: [String], _ text: String) throws(UsageError) -> Command {
            try Command.parse(
                arguments, environment: [:],
                config: { Result { () throws(ConfigFile.Error) in try ConfigFile(parsing: text) } },
                configPath: "/etc/partyradio/config")
        }
        guard case .dj(let dj) = try parse(["dj"], sample) else { throw Failure() }
        #expect(dj.name.value == "Rooftop" && dj.libraries == ["/music/a", "/music/b with space "])
        #expect(dj.playback.audioDriver == "null")
        guard case .dj(let named) = try parse(["dj", "--name", "Cellar"], sample) else { throw Failure() }
        #expect(named.name.value == "Cellar" && named.libraries.count == 2)
        guard case .listen(let listen) = try parse(["listen", "Roof"], sample) else { throw Failure() }
        #expect(listen.displayName?.value == "Ann" && listen.station == "Roof")
        // Help and version work with a broken file; other commands name it.
        #expect(try parse(["dj", "--help"], "bogus") == .help("dj"))
        #expect(try parse(["listen", "--version"], "bogus") == .version)
        #expect(try parse(["stats"], "bogus") == .stats(Command.StatsOptions()))
        #expect(throws: UsageError("line 1: expected 'key = value', got 'bogus'.")) { try parse(["listen"], "bogus") }
        // A value from the file that the command refuses says where it came from.
        #expect(
            throws: UsageError(
                "'--port' takes a whole number from 0 to 65535; got '99999'. (This comes from the config file "
                    + "/etc/partyradio/config.)", command: "dj")
        ) { try parse(["dj"], "name = x\nport = 99999") }
        #expect(throws: UsageError("A station needs a name: pass --name \"My Party\".", command: "dj")) {
            try parse(["dj"], "port = 1")
        }
    }

    @Test func theFileIsFoundTheXDGWay() async throws {
        #expect(ConfigFile.path(environment: ["XDG_CONFIG_HOME": "/etc"]) == "/etc/partyradio/config")
        #expect(
            ConfigFile.path(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/home/a"])
                == "/home/a/.config/partyradio/config")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-config-\(UUID())")
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("partyradio"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try "name = x\nport = 99999\n".write(
            to: home.appendingPathComponent("partyradio/config"), atomically: true, encoding: .utf8)
        let run = await runCLI("dj", [], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(run.code == 2)
        #expect(run.err.contains("(This comes from the config file \(home.path)/partyradio/config.)"))
        try "colour = red\n".write(
            to: home.appendingPathComponent("partyradio/config"), atomically: true, encoding: .utf8)
        let bad = await runCLI("stations", [], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(bad.code == 2)
        #expect(
            bad.err.hasPrefix("Error: In the config file \(home.path)/partyradio/config, line 1: unknown key 'colour'"))
    }

    @Test func theHelpListsEveryKey() {
        for key in ConfigFile.keys {
            #expect(HelpPages.topLevel.contains(key.name), "\(key.name)")
            #expect(HelpPages.files.contains(key.name), "\(key.name)")
        }
    }

    struct Failure: Error {}
}
