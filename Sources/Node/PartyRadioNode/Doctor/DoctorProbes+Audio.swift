import Foundation
import PartyRadioCore
import PartyRadioMedia
import Synchronization

extension DoctorProbes {
    /// What playing a test tone through libmpv showed.
    public struct AudioProbe: Equatable, Sendable {
        /// The output asked for (`--audio-driver`, or the config file's `audio-driver`); nil: the
        /// first that works, as a listener picks it.
        public var requested: String?
        /// The output mpv opened (its `current-ao`), nil if none.
        public var opened: String?
        /// Why it did not play, in mpv's words.
        public var error: String?
        /// There is no sound device (`/dev/snd`) and no `PULSE_SERVER`: a listener would use the
        /// null output without trying the others, and so was mpv not started.
        public var noDevice: Bool
        /// libmpv itself could not be loaded (`error` says why): nothing can play here.
        public var libraryMissing: Bool

        public init(
            requested: String?, opened: String?, error: String?, noDevice: Bool = false, libraryMissing: Bool = false
        ) {
            self.requested = requested
            self.opened = opened
            self.error = error
            self.noDevice = noDevice
            self.libraryMissing = libraryMissing
        }
    }

    /// Starts libmpv with `driver` (nil: PipeWire, PulseAudio, ALSA, else the null output, as
    /// `listen` does on a machine with a sound device) and plays a quiet generated tone for about
    /// `playMs`, watching whether mpv opens an audio output.
    /// `soundServer` is the command's `PULSE_SERVER`, as ``PlaybackOptions/soundServer``.
    public static func audio(driver: String?, soundServer: String?, playMs: Int = 200, timeoutMs: Int = 3000)
        -> AudioProbe
    {
        // First whether the player can exist at all: every node that plays loads libmpv, sound device or not.
        do { try MpvLibrary.load() } catch {
            return AudioProbe(requested: driver, opened: nil, error: "\(error)", libraryMissing: true)
        }
        // What a listener does here: with no sound device it goes straight to the null output.
        if driver == nil && !PlayerDriver.hasSoundDevice(soundServer: soundServer) {
            return AudioProbe(requested: nil, opened: nil, error: nil, noDevice: true)
        }
        let audio = PlayerDriver.audioOutput(driver: driver, soundServer: soundServer)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "partyradio-doctor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = ToneMelody(notes: [0, 7], noteMs: 150).render(
            durationMs: playMs + 400, sampleRate: DemoTrackSpec.sampleRate, amplitude: 0.08)
        let path = directory.appendingPathComponent("tone.wav").path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(WAVWriter.pcm16(samples: tone, sampleRate: DemoTrackSpec.sampleRate)).write(
                to: URL(fileURLWithPath: path))
        } catch {
            return AudioProbe(requested: driver, opened: nil, error: "could not write a test tone: \(error)")
        }
        let player: Player
        do { player = try Player(options: Player.Options(audio: audio, volume: 60)) } catch {
            return AudioProbe(requested: driver, opened: nil, error: error.description)
        }
        defer { player.shutdown() }
        let ended = Mutex<PlayerEvent.EndReason?>(nil)
        let events = player.events
        let watcher = Task.detached {
            for await event in events {
                if case .endOfFile(let reason) = event {
                    ended.withLock { $0 = reason }
                    return
                }
            }
        }
        defer { watcher.cancel() }
        do { try player.load(path) } catch {
            return AudioProbe(requested: driver, opened: nil, error: error.description)
        }
        let start = ContinuousClock.now
        var openedAt: ContinuousClock.Instant?
        var opened: String?
        playing: while ContinuousClock.now - start < .milliseconds(timeoutMs) {
            if opened == nil, let current = player.audioOutputDriver, !current.isEmpty {
                opened = current
                openedAt = .now
            }
            if let openedAt, ContinuousClock.now - openedAt >= .milliseconds(playMs) { break playing }
            switch ended.withLock({ $0 }) {
            case .error(let message)?:
                return AudioProbe(requested: driver, opened: opened, error: message)
            case .some:
                guard opened != nil else {
                    return AudioProbe(requested: driver, opened: nil, error: "the tone ended without an audio output")
                }
                break playing
            case nil:
                break
            }
            usleep(10_000)
        }
        try? player.stop()
        if opened == nil {
            return AudioProbe(
                requested: driver, opened: nil, error: "no audio output opened within \(timeoutMs / 1000) s")
        }
        return AudioProbe(requested: driver, opened: opened, error: nil)
    }
}
