import CMpvLoader
import Dispatch
import Foundation
import PartyRadioCore
import Synchronization

/// Why the player could not do what was asked, with mpv's own error text.
public struct PlayerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// mpv's error code (negative), or 0 when the error is ours.
    public let mpvCode: Int32
    /// libmpv itself could not be loaded: no other audio option helps, only installing it (or not playing).
    public let libraryMissing: Bool

    init(_ description: String, mpvCode: Int32 = 0, libraryMissing: Bool = false) {
        self.description = description
        self.mpvCode = mpvCode
        self.libraryMissing = libraryMissing
    }

    init(_ what: String, code: Int32) {
        self.init("\(what): \(String(cString: prmpv_error_string(code)))", mpvCode: code)
    }
}

/// Something the player did, delivered on `Player.events`.
public enum PlayerEvent: Hashable, Sendable {
    /// A file or URL was opened and its playback is starting.
    case fileLoaded
    /// Playback (re)started after a load or a seek: positions are meaningful again.
    case playbackRestarted
    /// The current file ended: reached its end, was stopped or replaced, or failed.
    case endOfFile(EndReason)
    /// The player shut down; no more events follow.
    case shutdown

    public enum EndReason: Hashable, Sendable {
        case finished
        case stopped
        case error(String)
    }
}

/// Where the player is: `positionNs` into the file at local instant `sampledAtNs`.
public struct PlayerPosition: Hashable, Sendable {
    public var positionNs: Int64
    public var sampledAtNs: Int64
    /// The current speed (1 = normal), so callers can extrapolate.
    public var speed: Double

    /// The position extrapolated to local instant `now`.
    public func position(at now: Int64) -> Int64 {
        positionNs + Int64((Double(now - sampledAtNs) * speed).rounded())
    }
}

/// Plays one source at a time through libmpv: headless-capable (`ao=null`, `vo=null`), started at a
/// position, seekable, with speed control for synchronisation. Thread-safe. Events are read on a
/// dedicated thread: mpv's wakeup callback only signals it (no work inside the callback). The first
/// player loads libmpv (`MpvLibrary`), which the binary does not link.
public final class Player: Sendable {
    /// Configuration fixed at creation.
    public struct Options: Hashable, Sendable {
        public enum AudioOutput: Hashable, Sendable {
            /// `ao=null`: decode and keep time in real time, no sound (headless nodes, `--no-audio`).
            case none
            /// The first working of PipeWire, PulseAudio and ALSA, else `null` (machines without a sound card).
            case automatic
            /// An mpv audio output driver list, as for `--ao` (e.g. `"alsa"`, `"pulse,alsa"`).
            case driver(String)
        }

        public var audio: AudioOutput
        /// Initial volume 0…100 (mpv's scale), nil for mpv's default.
        public var volume: Int?
        /// Keep the pitch when the speed is nudged (mpv's scaletempo). Off: small nudges resample
        /// instead, which is cleaner for ±3 % but shifts the pitch slightly.
        public var pitchCorrection: Bool
        /// Any further mpv options, set before initialisation (e.g. `["ao-null-latency": "0.05"]`).
        public var extraOptions: [String: String]
        /// Through PulseAudio: how often the sound server asks for more audio, as a share of the
        /// stream's buffer (mpv's `pulse-buffer`) in thousandths, at most 500; 0 leaves it to the
        /// server (20 ms). Process-wide: the last player made sets it for every later stream
        /// (CMpvLoader.h, "PulseAudio's request size").
        public var pulseRequestPermille: Int
        /// Through PulseAudio with `pulse-latency-hacks`: how long, in milliseconds, one answered
        /// timing report serves mpv's delay queries, moved on by the time since the server took it,
        /// instead of a round trip to the server for each; 0 for a round trip every time (mpv's
        /// own). Process-wide, like ``pulseRequestPermille`` (CMpvLoader.h, "PulseAudio's timing
        /// reports").
        public var pulseTimingReuseMs: Int
        /// Through PulseAudio: the volume is the stream's at the server (mpv's `ao-volume`, given to
        /// each stream mpv opens before it plays), heard at once, where mpv's own is heard once the
        /// stream's buffer has played out (100 ms). Other outputs keep mpv's own (``PlayerVolumeRoute``).
        /// Process-wide, like ``pulseRequestPermille``: the last player made with it sets the level
        /// each new stream starts with.
        public var streamVolume: Bool

        public init(
            audio: AudioOutput = .automatic, volume: Int? = nil, pitchCorrection: Bool = true,
            extraOptions: [String: String] = [:], pulseRequestPermille: Int = 0, pulseTimingReuseMs: Int = 0,
            streamVolume: Bool = false
        ) {
            self.audio = audio
            self.volume = volume
            self.pitchCorrection = pitchCorrection
            self.extraOptions = extraOptions
            self.pulseRequestPermille = pulseRequestPermille
            self.pulseTimingReuseMs = pulseTimingReuseMs
            self.streamVolume = streamVolume
        }
    }

    /// Player events, in order. Finishes when the player shuts down.
    public let events: AsyncStream<PlayerEvent>

    private let handle: MpvHandle
    private let clock: any NanoClock
    private let wakeup: WakeupSignal
    private let restarts = RestartCounter()
    private let state: Mutex<State>
    private let eventThreadDone = DispatchSemaphore(value: 0)
    /// Where the volume goes (``Options/streamVolume``); nil: mpv's own, always.
    private let volumeRoute: PlayerVolumeState?
    /// The sources mpv opens through ``streamProtocol`` (nil: none).
    let streams: PlayerStreams?

    private struct State {
        var shutDown = false
        var speed = 1.0
    }

    /// Samples in each audio frame mpv's output takes (the `af` setting in ``init(options:clock:openStream:)``).
    static let frameSamples = 4_800

    /// Creates and starts an idle player.
    /// - Parameters:
    ///   - clock: the clock positions are timestamped with (the machine's real clock by default).
    ///   - openStream: opens the source a ``streamURL(named:)`` names (on mpv's threads: it must not
    ///     call the player); nil: the player has no such sources.
    public init(
        options: Options = Options(), clock: any NanoClock = RealtimeClock(),
        openStream: (@Sendable (String) -> (any PlayerByteSource)?)? = nil
    ) throws(PlayerError) {
        try MpvLibrary.load()
        guard let raw = prmpv_create() else { throw PlayerError("mpv could not be created (out of memory?)") }
        let handle = MpvHandle(raw: raw)
        var settings: [(String, String)] = [
            ("vo", "null"), ("vid", "no"), ("video", "no"), ("audio-display", "no"), ("terminal", "no"),
            ("idle", "yes"), ("keep-open", "no"), ("input-default-bindings", "no"), ("input-vo-keyboard", "no"),
            ("osc", "no"), ("load-scripts", "no"), ("ytdl", "no"), ("config", "no"), ("resume-playback", "no"),
            ("audio-pitch-correction", options.pitchCorrection ? "yes" : "no"),
            // mpv's built-in Lua scripts (the stats overlay, the console, conditional profiles) each
            // get a Lua state and a thread in libmpv too; nothing here shows or types into them.
            ("load-stats-overlay", "no"), ("load-osd-console", "no"), ("load-auto-profiles", "no"),
            // No looking next to each file for cover art, audio or subtitle files.
            ("cover-art-auto", "no"), ("audio-file-auto", "no"), ("sub-auto", "no"),
            // Audio in fewer, larger pieces. mpv's core decodes a frame into the output's queue each
            // time the output takes one, each a wake-up of both threads, and its demuxer thread reads
            // a packet each time the decoder takes one: WAV comes in 4 KB packets and AAC in 1,024
            // samples, 20–50 a second. With frames of 4,800 samples (100 ms at 48 kHz, 109 ms at
            // 44.1) and WAV packets of 16 KB a playing listener's core woke 21–35 times a second
            // instead of 46–70, and its demuxer 7–10 instead of 26–35 (docs/MEDIA.md, "Fewer
            // wake-ups"). The graph gets one thread: libavfilter's own pool started threads at
            // every seek. The resampler, which plays every speed but 1 (no pitch correction, as the
            // nodes play), cuts its output into pieces of at most 40 ms unless told otherwise; 110 ms
            // keeps these frames whole at 44.1 kHz and more within a 1 % nudge. Since the queue
            // (`audio-buffer`, 0.2 s) takes frames until it is full, it holds 0.2 s and at most one
            // frame more, and the output one more: at 48 kHz up to 0.3 s where 1,024-sample frames
            // made it 0.24; at the demo library's 22.05 kHz a frame is 218 ms, so up to 0.44 s.
            // `max_size` is the WAV demuxer's (others leave it unused); a file still arriving keeps
            // 4 KB packets (``streamLoadOptions``).
            ("af", "lavfi=graph=[asetnsamples=n=\(Self.frameSamples):p=0]:o=[threads=1]"),
            ("audio-resample-max-output-size", "110"), ("demuxer-lavf-o", "max_size=16384"),
        ]
        switch options.audio {
        case .none: settings.append(("ao", "null"))
        case .automatic: settings.append(("ao", "pipewire,pulse,alsa,null"))
        case .driver(let list): settings.append(("ao", list))
        }
        if let volume = options.volume { settings.append(("volume", String(min(100, max(0, volume))))) }
        if options.streamVolume { prmpv_set_pulse_stream_volume(Int32(min(100, max(0, options.volume ?? 100)))) }
        settings += options.extraOptions.sorted { $0.key < $1.key }
        prmpv_set_pulse_request(UInt32(clamping: options.pulseRequestPermille))
        prmpv_set_pulse_timing_reuse(UInt32(clamping: options.pulseTimingReuseMs))
        for (name, value) in settings {
            let code = prmpv_set_option_string(raw, name, value)
            // "video"/"vid" differ across mpv versions; an unknown option name is not fatal.
            if code < 0 && code != MPV_ERROR_OPTION_NOT_FOUND.rawValue {
                prmpv_terminate_destroy(raw)
                throw PlayerError("mpv option \(name)=\(value)", code: code)
            }
        }
        let initialised = prmpv_initialize(raw)
        guard initialised >= 0 else {
            prmpv_terminate_destroy(raw)
            throw PlayerError("mpv could not start", code: initialised)
        }
        let streams = openStream.map(PlayerStreams.init(open:))
        if let streams {
            let code = streams.register(on: raw)
            guard code >= 0 else {
                prmpv_terminate_destroy(raw)
                throw PlayerError("mpv \(Self.streamProtocol)://", code: code)
            }
        }
        self.streams = streams
        self.handle = handle
        self.clock = clock
        var delay = 0.0
        outputLatencyNs =
            prmpv_get_property(raw, "audio-delay", MPV_FORMAT_DOUBLE, &delay) >= 0 ? Int64((-delay * 1e9).rounded()) : 0
        self.wakeup = WakeupSignal()
        self.state = Mutex(State())
        let volumeRoute = options.streamVolume ? PlayerVolumeState(level: options.volume ?? 100) : nil
        self.volumeRoute = volumeRoute
        let (stream, continuation) = AsyncStream.makeStream(
            of: PlayerEvent.self, bufferingPolicy: .bufferingNewest(256))
        self.events = stream

        prmpv_set_wakeup_callback(raw, playerWakeup, Unmanaged.passUnretained(wakeup).toOpaque())
        let audioReopened: @Sendable () -> Void = { [handle] in
            guard let volumeRoute else { return }
            let name = prmpv_get_property_string(handle.raw, "current-ao").map { text in
                defer { prmpv_free(text) }
                return String(cString: text)
            }
            guard let settings = volumeRoute.route.withLock({ $0.reopened(as: name) }) else { return }
            Player.apply(settings, to: handle)
        }
        let thread = Thread { [handle, wakeup, restarts, eventThreadDone, streams] in
            nameCurrentThread("partyradio-mpv")
            Player.runEventLoop(
                handle: handle, wakeup: wakeup, restarts: restarts, streams: streams, audioReopened: audioReopened,
                continuation: continuation)
            eventThreadDone.signal()
        }
        thread.name = "partyradio.mpv-events"
        thread.start()
        wakeup.signal()  // drain anything queued before the callback was set
    }

    deinit { shutdown() }

    /// The buffer and request size PulseAudio granted this process's last playback stream, in
    /// nanoseconds; nil before any stream (or with another audio output).
    public static var pulseStream: (bufferNs: Int64, requestNs: Int64)? {
        var buffer: UInt64 = 0
        var request: UInt64 = 0
        guard prmpv_pulse_granted(&buffer, &request) != 0 else { return nil }
        return (Int64(clamping: buffer) * 1000, Int64(clamping: request) * 1000)
    }

    /// The timing updates mpv asked PulseAudio for in this process so far: sent to the server, and
    /// answered from the last one (``Options/pulseTimingReuseMs``).
    public static var pulseTimingUpdates: (sent: UInt64, reused: UInt64) {
        var sent: UInt64 = 0
        var reused: UInt64 = 0
        prmpv_pulse_timing_counts(&sent, &reused)
        return (sent, reused)
    }

    /// Stops playback and destroys the mpv instance. Further calls fail with an error. Idempotent.
    public func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.shutDown = true }
            return !state.shutDown
        }
        guard first else { return }
        wakeup.stop()
        eventThreadDone.wait()
        prmpv_set_wakeup_callback(handle.raw, nil, nil)
        prmpv_terminate_destroy(handle.raw)
    }

    /// Opens `source` (a file path or URL) and plays it from `startNs`, replacing what was playing.
    /// - Parameter paused: open it paused at `startNs` (e.g. to pre-roll before a synchronised start).
    public func load(_ source: String, startNs: Int64 = 0, paused: Bool = false) throws(PlayerError) {
        var options = "start=\(Self.seconds(startNs)),pause=\(paused ? "yes" : "no"),speed=1"
        if source.hasPrefix(Self.streamProtocol + "://") { options += "," + Self.streamLoadOptions }
        var arguments = ["loadfile", source, "replace"]
        // mpv 0.38 (client API 2.3) inserted an index argument before the options.
        if prmpv_client_api_version() >= (2 << 16 | 3) { arguments.append("-1") }
        arguments.append(options)
        try command(arguments)
        state.withLock { $0.speed = 1 }
    }

    /// Jumps to `positionNs` exactly (decoding from the previous keyframe if needed).
    public func seek(toNs positionNs: Int64) throws(PlayerError) {
        try command(["seek", Self.seconds(max(0, positionNs)), "absolute+exact"])
    }

    /// Pauses or resumes.
    public func setPaused(_ paused: Bool) throws(PlayerError) {
        try setProperty("pause", flag: paused)
    }

    /// Stops playback and unloads the file (the player stays ready for the next `load`).
    public func stop() throws(PlayerError) {
        try command(["stop"])
    }

    /// Sets the playback speed (1 = normal); synchronisation uses values within a few percent of 1.
    public func setSpeed(_ speed: Double) throws(PlayerError) {
        try setProperty("speed", double: speed)
        state.withLock { $0.speed = speed }
    }

    /// Sets the volume, 0…100: mpv's own, or the stream's at the server (``Options/streamVolume``).
    public func setVolume(_ volume: Int) throws(PlayerError) {
        guard let volumeRoute else {
            try setProperty("volume", double: Double(min(100, max(0, volume))))
            return
        }
        try ensureRunning()
        let (settings, level) = volumeRoute.route.withLock { ($0.set(volume), $0.level) }
        // The loader's level first: a stream mpv opens from now on starts with it.
        prmpv_set_pulse_stream_volume(Int32(level))
        let code = Self.apply(settings, to: handle)
        guard code >= 0 else { throw PlayerError("mpv volume", code: code) }
    }

    /// Sets mpv's volume and, when the stream carries the level, the stream's (`ao-volume`; without
    /// an output open it is unavailable, and the next stream starts at the loader's level).
    /// Returns mpv's answer to the first.
    @discardableResult
    private static func apply(_ settings: (mpvVolume: Int, streamVolume: Int?), to handle: MpvHandle) -> Int32 {
        var level = Double(settings.mpvVolume)
        let code = prmpv_set_property(handle.raw, "volume", MPV_FORMAT_DOUBLE, &level)
        guard let stream = settings.streamVolume else { return code }
        var streamLevel = Double(stream)
        _ = prmpv_set_property(handle.raw, "ao-volume", MPV_FORMAT_DOUBLE, &streamLevel)
        return code
    }

    /// The current position, timestamped with the player's clock at the middle of the query; nil
    /// when nothing plays or the position is unknown (loading, seeking).
    public func position() -> PlayerPosition? {
        var seconds = 0.0
        let before = clock.now()
        // audio-pts, not time-pos: time-pos moves in audio-chunk steps (±50 ms seen with ao=null),
        // audio-pts is the written position minus the output's buffered delay, smooth to ~15 µs.
        var code = prmpv_get_property(handle.raw, "audio-pts", MPV_FORMAT_DOUBLE, &seconds)
        if code < 0 { code = prmpv_get_property(handle.raw, "time-pos", MPV_FORMAT_DOUBLE, &seconds) }
        let after = clock.now()
        guard code >= 0 else { return nil }
        return PlayerPosition(
            positionNs: Int64((seconds * 1e9).rounded()), sampledAtNs: before + (after - before) / 2,
            speed: state.withLock { $0.speed })
    }

    /// How many times playback has (re)started after a load or a seek so far: a load or seek is
    /// done once this grows past its value from before the command.
    public var playbackRestartCount: Int { restarts.value }

    /// Whether the player is paused (or idle), from mpv.
    public var isPaused: Bool { (try? flagProperty("pause")) ?? true }

    /// Whether no file is loaded.
    public var isIdle: Bool { (try? flagProperty("idle-active")) ?? true }

    /// Duration of the current file, when known.
    public var durationNs: Int64? { doubleProperty("duration").map { Int64(($0 * 1e9).rounded()) } }

    /// The audio output driver in use (e.g. `"null"`, `"pulse"`), nil before audio starts.
    public var audioOutputDriver: String? { stringProperty("current-ao") }

    /// Extra output latency to add to the corrector's sums, in nanoseconds: mpv's user
    /// `audio-delay` (negative delay = audio earlier). mpv 0.35 already subtracts the device
    /// buffer it knows about from `time-pos`, and exposes no separate latency property.
    /// Read once, when the player is made: only an option sets it (this player has no key
    /// bindings and no scripts), and every property read is a round trip to mpv's core thread,
    /// which the synchronisation would otherwise pay on every tick.
    public let outputLatencyNs: Int64

    /// Any mpv property as a string, for diagnostics (`doctor`, traces).
    public func stringProperty(_ name: String) -> String? {
        guard let value = prmpv_get_property_string(handle.raw, name) else { return nil }
        defer { prmpv_free(value) }
        return String(cString: value)
    }

    /// Any mpv property as a double.
    public func doubleProperty(_ name: String) -> Double? {
        var value = 0.0
        return prmpv_get_property(handle.raw, name, MPV_FORMAT_DOUBLE, &value) >= 0 ? value : nil
    }

    // MARK: mpv calls

    private func command(_ arguments: [String]) throws(PlayerError) {
        try ensureRunning()
        let code = withCStrings(arguments) { argv in prmpv_command(handle.raw, argv) }
        guard code >= 0 else { throw PlayerError("mpv \(arguments[0])", code: code) }
    }

    private func setProperty(_ name: String, flag: Bool) throws(PlayerError) {
        try ensureRunning()
        var value: Int32 = flag ? 1 : 0
        let code = prmpv_set_property(handle.raw, name, MPV_FORMAT_FLAG, &value)
        guard code >= 0 else { throw PlayerError("mpv \(name)", code: code) }
    }

    private func setProperty(_ name: String, double: Double) throws(PlayerError) {
        try ensureRunning()
        var value = double
        let code = prmpv_set_property(handle.raw, name, MPV_FORMAT_DOUBLE, &value)
        guard code >= 0 else { throw PlayerError("mpv \(name)", code: code) }
    }

    private func flagProperty(_ name: String) throws(PlayerError) -> Bool {
        try ensureRunning()
        var value: Int32 = 0
        let code = prmpv_get_property(handle.raw, name, MPV_FORMAT_FLAG, &value)
        guard code >= 0 else { throw PlayerError("mpv \(name)", code: code) }
        return value != 0
    }

    private func ensureRunning() throws(PlayerError) {
        if state.withLock({ $0.shutDown }) { throw PlayerError("the player was shut down") }
    }

    static func seconds(_ nanoseconds: Int64) -> String {
        let sign = nanoseconds < 0 ? "-" : ""
        let magnitude = nanoseconds.magnitude
        let fraction = String(magnitude % 1_000_000_000)
        return "\(sign)\(magnitude / 1_000_000_000).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)"
    }

    // MARK: Event thread

    /// Waits for wakeups and drains mpv's event queue until shutdown.
    private static func runEventLoop(
        handle: MpvHandle, wakeup: WakeupSignal, restarts: RestartCounter, streams: PlayerStreams?,
        audioReopened: @Sendable () -> Void, continuation: AsyncStream<PlayerEvent>.Continuation
    ) {
        defer { continuation.finish() }
        while wakeup.wait() {
            while let event = prmpv_wait_event(handle.raw, 0)?.pointee, event.event_id != MPV_EVENT_NONE {
                switch event.event_id {
                case MPV_EVENT_FILE_LOADED:
                    continuation.yield(.fileLoaded)
                case MPV_EVENT_PLAYBACK_RESTART:
                    restarts.increment()
                    continuation.yield(.playbackRestarted)
                case MPV_EVENT_END_FILE:
                    if let data = event.data?.assumingMemoryBound(to: mpv_event_end_file.self).pointee {
                        // A stream whose source failed ends, to mpv, as if it were complete.
                        let failure = streams?.takeFailure()
                        let reason = endReason(data)
                        if reason == .finished, let failure {
                            continuation.yield(.endOfFile(.error("the source failed: \(failure)")))
                        } else {
                            continuation.yield(.endOfFile(reason))
                        }
                    }
                case MPV_EVENT_AUDIO_RECONFIG:
                    audioReopened()
                case MPV_EVENT_SHUTDOWN:
                    continuation.yield(.shutdown)
                    return
                default:
                    break
                }
            }
        }
        continuation.yield(.shutdown)
    }

    private static func endReason(_ data: mpv_event_end_file) -> PlayerEvent.EndReason {
        switch data.reason {
        case MPV_END_FILE_REASON_EOF: .finished
        case MPV_END_FILE_REASON_ERROR: .error(String(cString: prmpv_error_string(data.error)))
        default: .stopped
        }
    }
}

/// libmpv, loaded on first use (`dlopen`) rather than linked: the commands that play nothing never
/// pay for its ~190 libraries (docs/MEDIA.md). `Player` loads it; anyone may load it earlier.
public enum MpvLibrary {
    /// The library's soname (Debian 12 package: `libmpv2`).
    public static let soname = PRMPV_SONAME

    /// Loads libmpv (once per process; later calls return at once). Thread-safe.
    /// - Parameter soname: another file to load, for tests; the first library loaded stays in use.
    /// - Throws: `PlayerError` with `libraryMissing`, one sentence with the fix and the loader's reason.
    public static func load(soname: String = MpvLibrary.soname) throws(PlayerError) {
        var reason = [CChar](repeating: 0, count: 512)
        guard prmpv_load(soname, &reason, reason.count) != 0 else {
            keepLargeBlocksOutOfTheHeap()
            return
        }
        let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw PlayerError(
            "libmpv is not installed: sudo apt install libmpv2 (\(why.isEmpty ? "\(soname) did not load" : why))",
            libraryMissing: true)
    }

    /// Whether libmpv is loaded in this process.
    public static var isLoaded: Bool { prmpv_is_loaded() != 0 }

    /// Blocks of 256 KiB and more are mapped and unmapped on their own, always. libmpv allocates a
    /// buffer of about 10 MB on a new thread for every file it plays; glibc's *dynamic* mmap
    /// threshold, raised by the first such block freed, then serves the next from that thread's
    /// arena, which keeps it when freed: a playing node grew by ~10.5 MB per track (seen: four
    /// arenas of 10.4 MB after four tracks, `/proc/PID/smaps`). A fixed threshold turns the
    /// dynamic one off (mallopt(3)), and the growth with it.
    /// The process's entry sets it first thing too: the DJ's demo library (a few WAV files of
    /// about 7 MB, made and written at start) left 5 MB in the heap the same way.
    public static func keepLargeBlocksOutOfTheHeap() {
        _ = prmpv_set_mmap_threshold(256 * 1024)
    }
}

/// The mpv handle. mpv's client API is thread-safe (except `mpv_wait_event`, which only the event
/// thread calls, and destruction, which `shutdown()` orders after that thread ends).
private struct MpvHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// What mpv's wakeup callback touches: a counting signal and a stop flag.
final class WakeupSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// Called from mpv's wakeup callback: must return at once.
    func signal() { semaphore.signal() }

    func stop() {
        stopped.store(true, ordering: .releasing)
        semaphore.signal()
    }

    /// Blocks until signalled; false once stopped.
    func wait() -> Bool {
        semaphore.wait()
        return !stopped.load(ordering: .acquiring)
    }
}

/// Playback restarts seen by the event thread, read by anyone.
final class RestartCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .releasing) }
    var value: Int { count.load(ordering: .acquiring) }
}

/// mpv's wakeup callback (any mpv thread): only signals the event thread.
private func playerWakeup(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<WakeupSignal>.fromOpaque(context).takeUnretainedValue().signal()
}

/// Runs `body` with a NULL-terminated C argv built from `strings`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicated = strings.map { strdup($0) }
    defer { for pointer in duplicated { free(pointer) } }
    var argv: [UnsafePointer<CChar>?] = duplicated.map { UnsafePointer($0) }
    argv.append(nil)
    return argv.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}
