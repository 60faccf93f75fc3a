import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

/// `dj --live`, `--live-frame-ms`, `--live-bitrate` (docs/LIVE.md, "The DJ's capture").
@Suite struct LiveParsingTests {
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
                "--live-bitrate", "96",
            ])
        else {
            Issue.record("not a dj command")
            return
        }
        #expect(options.live == .pipe(path: "/tmp/snapfifo", format: .station))
        #expect(options.liveFrame == .ms2point5 && options.liveBitrateKbit == 96)
        guard case .dj(let stdin) = try Command.parse(["dj", "--name", "x", "--live", "-"]) else { return }
        #expect(stdin.live == .standardInput(format: .station) && stdin.liveFrame == .ms10)
        #expect(stdin.liveBitrateKbit == 128)
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
            usageError(["dj", "--name", "x", "--live", "-", "--library", "/music"])?.contains("not a queue") == true)
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
}
