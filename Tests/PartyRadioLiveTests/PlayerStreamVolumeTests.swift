import CMpvLoader
import Foundation
import PartyRadioCore
import PartyRadioMedia
import Testing

/// The file player's volume through PulseAudio, heard at a real null sink's monitor: the level is
/// the stream's at the server, and a stream mpv opens anew (another sample rate) plays its first
/// sample at that level.
@Suite(.serialized) struct PlayerStreamVolumeTests {
    /// A 440 Hz tone, both channels, peak 16,000, `seconds` long at `rate`.
    static func tone(rate: Int, seconds: Int) -> [UInt8] {
        var samples: [Int16] = []
        samples.reserveCapacity(rate * seconds * 2)
        for index in 0..<(rate * seconds) {
            let value = Int16((16_000 * sin(2 * Double.pi * 440 * Double(index) / Double(rate))).rounded())
            samples += [value, value]
        }
        return WAVWriter.pcm16(samples: samples, sampleRate: rate, channels: 2)
    }

    /// The sink's playback streams: (volume of the first channel as PulseAudio's pa_volume_t, the sample spec).
    static func sinkInputs(_ sound: NullSinkServer) throws -> [(volume: Int, spec: String)] {
        let text = try sound.pactl(["list", "sink-inputs"])
        // One block a stream ("Sink Input #N"); pacat's, which keeps the sink running, is left out.
        var inputs: [(volume: Int, spec: String)] = []
        let blocks = text.components(separatedBy: "Sink Input #").dropFirst()
        for block in blocks where !block.contains("application.name = \"pacat\"") {
            var spec = ""
            var volume = -1
            for line in block.split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("Sample Specification:") { spec = String(trimmed.dropFirst(21)) }
                // "Volume: front-left: 13107 /  20% / -41.94 dB,   front-right: …"
                if trimmed.hasPrefix("Volume:"), let at = trimmed.range(of: "front-left:") {
                    volume =
                        Int(trimmed[at.upperBound...].trimmingCharacters(in: .whitespaces).prefix { $0.isNumber }) ?? -1
                }
            }
            inputs.append((volume, spec))
        }
        return inputs
    }

    /// RMS of each 5 ms window of the recording between two CLOCK_MONOTONIC instants.
    static func windowRMS(_ recording: (samples: [Int16], startNs: Int64, rate: Double), from: Int64, to: Int64)
        -> [Double]
    {
        func index(_ ns: Int64) -> Int {
            min(recording.samples.count, max(0, Int(Double(ns - recording.startNs) * recording.rate / 1e9)))
        }
        let window = 240
        return stride(from: index(from), to: index(to) - window, by: window).map { start in
            let squares = recording.samples[start..<(start + window)].reduce(0.0) { $0 + Double($1) * Double($1) }
            return (squares / Double(window)).squareRoot()
        }
    }

    static func median(_ values: [Double]) -> Double { values.isEmpty ? -1 : values.sorted()[values.count / 2] }

    /// A null sink kept running (a stream of silence, so that the monitor's samples stay one clock
    /// with the recorder's while mpv has no stream, between files), recorded from its monitor, and
    /// two tone files of different sample rates.
    final class Bench {
        let sound: NullSinkServer
        let silence: Child
        let recorder: MonitorRecorder
        let directory: String

        init() throws {
            sound = try NullSinkServer()
            directory = sound.directory + "/tracks"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(PlayerStreamVolumeTests.tone(rate: 48_000, seconds: 8)).write(
                to: URL(fileURLWithPath: directory + "/a.wav"))
            try Data(PlayerStreamVolumeTests.tone(rate: 44_100, seconds: 8)).write(
                to: URL(fileURLWithPath: directory + "/b.wav"))
            silence = try Child(
                [
                    "/usr/bin/pacat", "-s", sound.address, "-d", "party", "--raw", "--format=s16le", "--rate=48000",
                    "--channels=2", "/dev/zero",
                ], environment: ["HOME=\(sound.directory)"])
            recorder = try MonitorRecorder(server: sound.address)
            let deadline = Date().addingTimeInterval(10)
            while recorder.recording.samples.count < 4_800 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }

        deinit {
            recorder.stop()
            silence.stop()
        }

        func player(streamVolume: Bool) throws -> Player {
            try Player(
                options: .init(
                    audio: .driver("pulse"), pitchCorrection: false, extraOptions: ["pulse-host": sound.address],
                    streamVolume: streamVolume))
        }
    }

    /// mpv's scale and PulseAudio's are both cubic: a level of 20 is 0.2³ of the tone's RMS (16,000 / √2).
    static let full = 16_000 / 2.0.squareRoot()
    static let low = full * 0.008
    static let ms: Int64 = 1_000_000

    /// The level is the stream's, heard once (not mpv's and the stream's both), and a stream mpv
    /// opens anew plays at it from its first sample.
    @Test(.enabled(if: NullSinkServer.available)) func theLevelIsTheStreamsAndANewStreamStartsAtIt() throws {
        let bench = try Bench()
        let (sound, recorder, directory) = (bench.sound, bench.recorder, bench.directory)
        let player = try bench.player(streamVolume: true)
        defer { player.shutdown() }
        let (full, low, ms) = (Self.full, Self.low, Self.ms)
        func settle() { Thread.sleep(forTimeInterval: 1.2) }

        try player.setVolume(20)  // before any output is open
        try player.load(directory + "/a.wav")
        let loadedA = monotonicNs()
        settle()
        let first = try Self.sinkInputs(sound)
        #expect(first.count == 1 && first.first?.volume == 13_107, "one stream at 20 % (0.2 × 65,536): \(first)")
        try player.setVolume(100)
        let loud = monotonicNs()
        settle()
        try player.setVolume(20)
        let quiet = monotonicNs()
        settle()
        #expect(try Self.sinkInputs(sound).first?.volume == 13_107)
        // Another sample rate: mpv opens a new stream, which must never play louder than 20.
        let reopen = monotonicNs()
        try player.load(directory + "/b.wav")
        settle()
        let second = try Self.sinkInputs(sound)
        #expect(
            second.count == 1 && second.first?.volume == 13_107 && second.first?.spec.contains("44100") == true,
            "a new stream, at 44.1 kHz and 20 %: \(second)")
        let end = monotonicNs()

        let recording = recorder.recording
        let atA = Self.median(Self.windowRMS(recording, from: loadedA + 600 * ms, to: loud))
        let atLoud = Self.median(Self.windowRMS(recording, from: loud + 400 * ms, to: quiet))
        let atQuiet = Self.median(Self.windowRMS(recording, from: quiet + 400 * ms, to: reopen))
        #expect(abs(atA - low) < low * 0.25, "the first stream at 20: \(atA), expected \(low)")
        #expect(abs(atLoud - full) < full * 0.1, "at 100: \(atLoud), expected \(full)")
        #expect(abs(atQuiet - low) < low * 0.25, "back at 20: \(atQuiet), expected \(low)")
        let acrossReopen = Self.windowRMS(recording, from: quiet + 400 * ms, to: end)
        #expect(!acrossReopen.isEmpty)
        #expect(
            (acrossReopen.max() ?? 0) < low * 2,
            "no 5 ms louder than twice the level of 20 across the new stream's start: \(acrossReopen.max() ?? 0)")
        let atB = Self.median(Self.windowRMS(recording, from: reopen + 600 * ms, to: end))
        #expect(abs(atB - low) < low * 0.25, "the new stream at 20: \(atB), expected \(low)")
    }

    /// The loader alone gives each stream mpv opens the level before it plays: a player that never
    /// sets the stream's volume itself (mpv's own at 100) is heard at 20 from its first sample.
    @Test(.enabled(if: NullSinkServer.available)) func aNewStreamIsGivenTheLevelBeforeItPlays() throws {
        let bench = try Bench()
        let player = try bench.player(streamVolume: false)
        prmpv_set_pulse_stream_volume(20)
        defer {
            player.shutdown()
            prmpv_set_pulse_stream_volume(-1)
        }
        let before = monotonicNs()
        try player.load(bench.directory + "/a.wav")
        Thread.sleep(forTimeInterval: 1.2)
        try player.load(bench.directory + "/b.wav")
        Thread.sleep(forTimeInterval: 1.2)
        let inputs = try Self.sinkInputs(bench.sound)
        #expect(inputs.count == 1 && inputs.first?.volume == 13_107, "at 20 %: \(inputs)")
        let windows = Self.windowRMS(bench.recorder.recording, from: before, to: monotonicNs())
        #expect(windows.filter { $0 > Self.low / 2 }.count > 300, "the tone was heard")
        #expect((windows.max() ?? 0) < Self.low * 2, "never louder than 20: \(windows.max() ?? 0)")
    }
}
