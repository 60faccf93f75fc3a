import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

/// `dj --live`, `--live-frame-ms`, `--live-bitrate`, `--latency` and `listen --latency-extra`
/// (docs/LIVE.md, "The DJ's capture" and "The station's delay").
@Suite struct LiveParsingTests {
    struct Failure: Error {}

    func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try Command.parse(arguments)
            return nil
        } catch { return error.message }
    }

    @Test func aLiveStationTakesItsSourceAndTuning() throws {
        guard
            case .dj(let options) = try Command.parse([
                "dj", "--name", "x", "--live", "pipe:/tmp/snapfifo?sampleformat=48000:16:2", "--live-frame-ms", "2.5",
                "--live-bitrate", "96", "--live-repairs", "always",
            ])
        else {
            Issue.record("not a dj command")
            return
        }
        #expect(options.live == .pipe(path: "/tmp/snapfifo", format: .station))
        #expect(options.liveFrame == .ms2point5 && options.liveBitrateKbit == 96 && options.liveRepairs == .always)
        guard case .dj(let stdin) = try Command.parse(["dj", "--name", "x", "--live", "-"]) else { return }
        #expect(stdin.live == .standardInput(format: .station) && stdin.liveFrame == .ms10)
        #expect(stdin.liveBitrateKbit == 128 && stdin.liveRepairs == .onLoss)
    }

    @Test func badValuesAreClearErrors() {
        let mismatch = usageError(["dj", "--name", "x", "--live", "pipe:/tmp/f?sampleformat=44100:16:2"])
        #expect(mismatch?.contains("44100:16:2") == true && mismatch?.contains("48000:16:2") == true)
        #expect(usageError(["dj", "--name", "x", "--live", "mic"])?.contains("pipe:PATH") == true)
        #expect(
            usageError(["dj", "--name", "x", "--live", "-", "--live-frame-ms", "7"])?.contains("2.5, 5, 10 or 20")
                == true)
        #expect(
            usageError(["dj", "--name", "x", "--live", "-", "--live-bitrate", "600"])?.contains("6 to 510") == true)
        #expect(usageError(["dj", "--name", "x", "--live-bitrate", "96"])?.contains("add --live") == true)
        #expect(
            usageError(["dj", "--name", "x", "--live", "-", "--live-repairs", "sometimes"])?.contains(
                "on-loss or always") == true)
        #expect(usageError(["dj", "--name", "x", "--live-repairs", "always"])?.contains("add --live") == true)
        #expect(
            usageError(["dj", "--name", "x", "--live", "-", "--library", "/music"])?.contains("not a queue") == true)
    }

    @Test("--latency is the station's delay, 20-2000 ms, for a live station; --latency-extra a listener's, 0-1000")
    func latencies() throws {
        guard case .dj(let dj) = try Command.parse(["dj", "--name", "x", "--live", "-", "--latency", "35"]) else {
            throw Failure()
        }
        #expect(dj.latencyMs == 35)
        guard case .dj(let plain) = try Command.parse(["dj", "--name", "x", "--live"]) else { throw Failure() }
        #expect(plain.latencyMs == 60)
        #expect(usageError(["dj", "--name", "x", "--live", "--latency", "19"])?.contains("20 to 2000") == true)
        #expect(usageError(["dj", "--name", "x", "--live", "--latency", "2001"])?.contains("20 to 2000") == true)
        #expect(usageError(["dj", "--name", "x", "--latency", "40"])?.contains("add --live") == true)
        guard case .listen(let listen) = try Command.parse(["listen", "--latency-extra", "40"]) else {
            throw Failure()
        }
        #expect(listen.latencyExtraMs == 40)
        guard case .listen(let none) = try Command.parse(["listen"]) else { throw Failure() }
        #expect(none.latencyExtraMs == 0)
        #expect(usageError(["listen", "--latency-extra", "1001"])?.contains("0 to 1000") == true)
        #expect(usageError(["listen", "--latency-extra", "-5"]) != nil)
        let command = try Command.parse(
            ["dj"], environment: [:],
            config: {
                Result { () throws(ConfigFile.Error) in
                    try ConfigFile(parsing: "name = Rooftop\nlive = pulse\nlatency = 45\nlatency-extra = 10")
                }
            }, configPath: "/etc/partyradio/config")
        guard case .dj(let configured) = command else { throw Failure() }
        #expect(configured.latencyMs == 45)
        let listener = try Command.parse(
            ["listen"], environment: [:],
            config: { Result { () throws(ConfigFile.Error) in try ConfigFile(parsing: "latency-extra = 10") } },
            configPath: "/etc/partyradio/config")
        guard case .listen(let configuredListener) = listener else { throw Failure() }
        #expect(configuredListener.latencyExtraMs == 10)
    }

    @Test func theConfigFileNamesTheSource() throws {
        let command = try Command.parse(
            ["dj"], environment: [:],
            config: {
                Result { () throws(ConfigFile.Error) in
                    try ConfigFile(parsing: "name = Rooftop\nlive = pipe:/run/snapfifo\nlive-bitrate = 96")
                }
            }, configPath: "/etc/partyradio/config")
        guard case .dj(let options) = command else {
            Issue.record("not a dj command")
            return
        }
        #expect(options.live == .pipe(path: "/run/snapfifo", format: .station) && options.liveBitrateKbit == 96)
    }

    @Test("--live alone is pulse, the station's own sink; pulse and pulse:NAME as given")
    func pulseSources() throws {
        func live(_ arguments: [String]) throws -> Command.DJOptions {
            guard case .dj(let options) = try Command.parse(["dj", "--name", "x"] + arguments) else { throw Failure() }
            return options
        }
        #expect(try live(["--live"]).live == .stationSink)
        #expect(try live(["--live", "--live-bitrate", "96"]).live == .stationSink)
        #expect(try live(["--live-bitrate", "96", "--live"]).liveBitrateKbit == 96)
        #expect(try live(["--live", "pulse"]).live == .stationSink)
        #expect(try live(["--live=pulse:line_in"]).live == .pulseSource("line_in"))
        #expect(try live(["--live", "pulse:sink_a.monitor"]).live == .pulseSource("sink_a.monitor"))
        #expect(try live(["--live", "-"]).live == .standardInput(format: .station))
        let takeover = try live(["--live", "--live-default-output"])
        #expect(takeover.live == .stationSink && takeover.liveDefaultOutput)
        #expect(usageError(["dj", "--name", "x", "--live-default-output"])?.contains("--live") == true)
        #expect(
            usageError(["dj", "--name", "x", "--live", "pulse:line_in", "--live-default-output"])?.contains(
                "station's own sink") == true)
        #expect(usageError(["dj", "--name", "x", "--live", "pulse:"])?.contains("pactl list short sources") == true)
    }

    @Test("--live-player NAME|none chooses the followed player (default: whichever plays), only with --live")
    func livePlayer() throws {
        func options(_ arguments: [String], config: String = "") throws -> Command.DJOptions {
            let command = try Command.parse(
                ["dj", "--name", "x"] + arguments, environment: [:],
                config: { Result { () throws(ConfigFile.Error) in try ConfigFile(parsing: config) } },
                configPath: "/etc/partyradio/config")
            guard case .dj(let options) = command else { throw Failure() }
            return options
        }
        #expect(try options(["--live"]).livePlayer == .playing)
        #expect(try options(["--live", "--live-player", "mpv"]).livePlayer == .named("mpv"))
        #expect(try options(["--live-player=mpv.instance42", "--live", "-"]).livePlayer == .named("mpv.instance42"))
        #expect(try options(["--live", "--live-player", "none"]).livePlayer == LivePlayerChoice.none)
        let bad = usageError(["dj", "--name", "x", "--live", "--live-player", "mp v"])
        #expect(bad?.contains("'mp v'") == true && bad?.contains("none") == true)
        #expect(usageError(["dj", "--name", "x", "--live-player", "mpv"])?.contains("add --live") == true)
        #expect(usageError(["dj", "--name", "x", "--live", "--live-player"]) != nil)
        // From the config file; a flag overrides it; without live it is left out.
        #expect(try options(["--live"], config: "live-player = spotify").livePlayer == .named("spotify"))
        #expect(
            try options(["--live", "--live-player", "none"], config: "live-player = spotify").livePlayer
                == LivePlayerChoice.none)
        #expect(try options([], config: "live-player = spotify").livePlayer == .playing)
    }

    @Test("live = pulse and live = pulse:NAME in the config file work as --live does")
    func pulseFromTheConfigFile() throws {
        for (text, expected) in [
            ("live = pulse\nlive-default-output = true", LiveSource.stationSink),
            ("live = pulse:alsa_input.usb", .pulseSource("alsa_input.usb")),
        ] {
            let command = try Command.parse(
                ["dj"], environment: [:],
                config: {
                    Result { () throws(ConfigFile.Error) in
                        try ConfigFile(parsing: "name = Rooftop\n\(text)")
                    }
                }, configPath: "/etc/partyradio/config")
            guard case .dj(let options) = command else {
                Issue.record("not a dj command")
                return
            }
            #expect(options.live == expected)
            if expected == .stationSink { #expect(options.liveDefaultOutput) }
        }
    }

    @Test("doctor --live checks the source named, pulse when none is")
    func doctorLive() throws {
        guard case .doctor(let plain) = try Command.parse(["doctor", "--live"]) else { throw Failure() }
        #expect(plain.live == .stationSink)
        guard case .doctor(let pipe) = try Command.parse(["doctor", "--live", "pipe:/srv/snapfifo", "--json"]) else {
            throw Failure()
        }
        #expect(pipe.live == .pipe(path: "/srv/snapfifo", format: .station) && pipe.json)
        guard case .doctor(let none) = try Command.parse(["doctor"]) else { throw Failure() }
        #expect(none.live == nil && !none.speaker)
        guard case .doctor(let speaker) = try Command.parse(["doctor", "--speaker"]) else { throw Failure() }
        #expect(speaker.speaker && speaker.live == nil)
    }
}
