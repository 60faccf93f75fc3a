import Dispatch
import Foundation
import PartyRadioCore
import PartyRadioHTTP
import PartyRadioLive
import PartyRadioMedia
import Synchronization

/// Carries out the machine's player commands on libmpv and the media cache as the ``LoadPlan``
/// decides (what to load, from where, when to correct the player and release the start-up pages),
/// and writes `--trace`. It reads the player's and the cache's state for the plan and decides
/// nothing itself.
///
/// Owned by the node's thread: the runtime calls it with its clock's `now`; mpv's event thread
/// only pushes a failure into the node's inbox.
final class PlayerDriver {
    /// The player, once made (never with `--no-audio`).
    private var sync: SyncController?
    /// The player being made on its own thread (a listener's), until ``takePlayer()`` has it.
    private var maker: PlayerMaker?
    /// Why the player could not be made in the background: the runtime stops the node with it.
    private(set) var failure: NodeError?
    private let trace: TraceWriter?
    /// A live station's output, for the trace: its counters, nil while none plays (set by the node).
    var liveReading: (() -> LivePlayerCounters?)?
    private let clock: NodeClock
    private let role: String
    private let inbox: Inbox<NodeInput>
    /// Whether this node plays at all (false with `--no-audio`).
    let playsAudio: Bool
    /// Where the station is, as the machine last said.
    private(set) var view: StationClockView?
    /// The local volume last asked for (0–100).
    private var volume = 100
    /// A speaker's delay trim: the player is held this far behind the station (docs/SPEAKERS.md).
    private var delayTrimNs: Int64 = 0
    /// When the machine was last told the sync error (``OutputReport``), at most once a second.
    private var syncToldAt: LocalTime?
    /// A listener's media cache (nil for the DJ, which plays its own files, and with `--no-audio`).
    private let cache: MediaCache?
    /// What to load, from where and when.
    private var plan: LoadPlan
    /// The local instant a prepared start is armed for, until it has happened (for `-v`).
    private var armedStart: Int64?
    /// Whether `-v` has said what PulseAudio granted the player's stream (once).
    private var pulseStreamNoted = false
    /// When the timing updates so far are logged (`-v`), 10 s after the stream was first noted.
    private var pulseTimingLogAt: LocalTime?

    /// A machine with no sound card and no sound server (`soundServer`: the command's
    /// `PULSE_SERVER`) gets mpv's null output straight away, instead of ALSA and PipeWire filling
    /// the terminal with their complaints on the way to the same fallback.
    static func hasSoundDevice(soundServer: String?) -> Bool {
        soundServer != nil || FileManager.default.fileExists(atPath: "/dev/snd")
    }

    /// The output mpv is given: the one asked for (`null`: none); else, with a sound server named,
    /// PulseAudio before the others (PipeWire would play elsewhere, and complain on stderr where
    /// it has no daemon); else the first that works, or none without a sound device.
    static func audioOutput(driver: String?, soundServer: String?) -> Player.Options.AudioOutput {
        if let driver { return driver == "null" ? .none : .driver(driver) }
        if soundServer != nil { return .driver("pulse,pipewire,alsa,null") }
        return hasSoundDevice(soundServer: nil) ? .automatic : .none
    }

    /// - Parameters:
    ///   - cacheDirectory: where a listener keeps the tracks it fetches ahead (nil: the player
    ///     streams every URL itself).
    ///   - inBackground: make the player (load libmpv, about 80 ms) on a thread of its own while the
    ///     node finds the station and its clock; loads wait for it. A failure then stops the node
    ///     through ``failure``. Otherwise the player is made here and a failure is thrown.
    init(
        role: String, options: PlaybackOptions, clock: NodeClock, inbox: Inbox<NodeInput>, cacheDirectory: URL? = nil,
        inBackground: Bool = false
    ) throws(NodeError) {
        self.role = role
        self.clock = clock
        self.inbox = inbox
        playsAudio = !options.noAudio
        trace = try options.tracePath.map { path throws(NodeError) in try TraceWriter(path: path) }
        // The media cache first: its thread, and libcurl's load (about 5 ms), come before libmpv's
        // load begins, which would hold both up (see the note on PlayerMaker).
        if !options.noAudio, let cacheDirectory, options.tuning.mediaCache {
            // A private station's media needs proof of its code, the cache's fetches as mpv's.
            cache = try? MediaCache(
                directory: cacheDirectory, headers: options.mediaProof.map { [(MediaServer.proofHeader, $0)] } ?? [])
            if cache == nil { Log.debug(.player, "no media cache in \(cacheDirectory.path): streaming") }
        } else {
            cache = nil
        }
        plan = LoadPlan(
            configuration: LoadPlan.Configuration(
                playsAudio: !options.noAudio, hasCache: cache != nil,
                playsPartialFiles: options.tuning.playsPartialFiles,
                releasesStartupPages: options.tuning.releasesStartupPages))
        guard !options.noAudio else { return }
        let recipe = PlayerMaker.Recipe(options: options, clock: clock, inbox: inbox, cache: cache)
        if inBackground {
            maker = PlayerMaker(recipe)
        } else {
            sync = try recipe.make()
        }
    }

    /// Takes the player from its maker once it is made (or its failure); true when there is one.
    @discardableResult
    private func takePlayer() -> Bool {
        if sync != nil { return true }
        guard let maker, let result = maker.result else { return false }
        self.maker = nil
        switch result {
        case .success(let made):
            sync = made
            if volume != 100 { try? made.player.setVolume(volume) }
            return true
        case .failure(let error):
            failure = error
            return false
        }
    }

    func follow(_ view: StationClockView) { self.view = view }

    /// Carries out one of the machine's commands at `now` (the runtime's clock): the volume at
    /// once, everything else as the plan says; a load goes ahead at once if it can.
    func execute(_ command: PlayerCommand, now: LocalTime) {
        if case .volume(let level) = command {  // needs no station: the DJ may set it before anything plays
            volume = level
            try? sync?.player.setVolume(level)
            return
        }
        if case .delayTrim(let ns) = command {  // the next correction moves the player there
            delayTrimNs = ns
            return
        }
        if playsAudio { takePlayer() }
        switch command {
        case .load, .pause, .resume, .stop: if playsAudio && view != nil { Log.debug(.player, "\(command)") }
        case .volume, .delayTrim, .prefetch, .fetch: break
        }
        run(plan.handle(command, view: view, now: now), now: now)
        guard case .load = command else { return }
        run(plan.loadNow(view: view, cache: lookAtCache(now: now), player: playerState, now: now), now: now)
    }

    /// The player's state for the plan (nil until it is made).
    private var playerState: LoadPlan.PlayerState? {
        sync.map { LoadPlan.PlayerState(isPreparing: $0.isPreparing, readingIntervalNs: $0.readingIntervalNs) }
    }

    /// The cache's state of the track the plan waits on, if it asks.
    private func lookAtCache(now: LocalTime) -> LoadPlan.CacheState? {
        guard let cache, let wanted = plan.wanted(view: view, playerMade: sync != nil, now: now) else { return nil }
        let url = wanted.track.source
        switch cache.status(of: url) {
        case .absent: return .absent
        case .ready(let path): return .ready(path: path)
        case .failed(let reason):
            Log.debug(.player, "cache failed (\(reason)): streaming \(url)")
            return .failed(reason)
        case .fetching:
            return .fetching(startReadable: wanted.asksStart && isReadable(wanted.track, in: cache, now: now))
        }
    }

    /// Carries out the plan's commands.
    private func run(_ commands: [LoadPlan.Command], now: LocalTime) {
        for command in commands {
            do throws(PlayerError) {
                switch command {
                case .fetch(let url, let first): cache?.request(url, now: first)
                case .load(let track, let from, let paused): try load(track, from: from, paused: paused, now: now)
                case .pause: try sync?.pause()
                case .resume:
                    guard let view else { break }
                    try sync?.resume(stationPositionAt: stationPosition(view))
                case .stop: try sync?.stop()
                case .correct:
                    guard let view, let status = sync?.tick(stationPositionAt: stationPosition(view)) else { break }
                    if let error = status.errorNs, syncToldAt.map({ now - $0 >= Nanos.seconds(1) }) ?? true {
                        syncToldAt = now
                        inbox.push(.output(.syncError(error)))
                    }
                case .releasePages:
                    let thread = Thread {
                        if let release = StartupPages.release() { Log.debug(.player, "\(release)") }
                    }
                    thread.name = "partyradio.pageout"
                    thread.start()
                }
            } catch {
                if case .load = command {
                    plan.loadFailed()
                    inbox.push(.playerFailed("\(error)"))
                }
                Log.debug(.player, "\(command) failed: \(error)")
            }
        }
    }

    /// Loads `track` from `source` at the station position.
    private func load(_ track: Track, from source: LoadPlan.Source, paused: Bool, now: LocalTime) throws(PlayerError) {
        guard let sync, let view else { return }
        let path: String
        switch source {
        case .url:
            path = track.source
            if cache != nil { Log.debug(.player, "playing \(track.id) from its URL") }
        case .cachedFile(let file):
            path = file
            Log.debug(.player, "playing \(track.id) from the cache")
        case .partialFile:
            path = Player.streamURL(named: MediaCache.streamName(for: track.source))
            Log.debug(.player, "playing \(track.id) from the cache while it downloads")
        }
        if paused {
            try sync.loadPaused(path, startNs: stationPosition(view)(now.ns))
        } else {
            try sync.load(path, stationPositionAt: stationPosition(view))
        }
    }

    /// Whether `track`'s file, still being fetched, has the bytes a start at the station position
    /// needs: what the player reads first, and ``partialStartSpanNs`` of audio from just ahead of
    /// the position (the cache then fetches from there first).
    private func isReadable(_ track: Track, in cache: MediaCache, now: LocalTime) -> Bool {
        let header = Player.streamStartBytes
        guard track.durationMs > 0, let position = view?.stationPosition(at: now) else {
            return cache.isReadable(track.source, headerBytes: header, tailBytes: Player.streamTailBytes)
        }
        let duration = Double(track.durationMs) * Double(Nanos.perMillisecond)
        return cache.isReadable(
            track.source, at: Double(position + Self.partialStartLeadNs) / duration,
            span: Double(Self.partialStartSpanNs) / duration, headerBytes: header,
            readThrough: Player.streamReadThroughBytes,
            lead: Double(Self.partialStartLeadNs + Self.partialStartPrerollNs) / duration,
            tailBytes: Player.streamTailBytes)
    }

    /// How far ahead of the station position a start from a partial file lands (about what the
    /// player's load takes), and how much audio from there is to be there first: under loss the
    /// bytes at the reader come little faster than they play, and a start with less stalled at
    /// once. More does not buy much: with 3 s a catalog station's first track started later
    /// (median 3.2 s against 1.8 s, scripts/bench-lossy.py at 25 % loss) and stuttered after the
    /// start as often (1 run in 5 or 6: re-seeks for about 2 s).
    static let partialStartLeadNs = Nanos.ms(500)
    /// The bytes from this long before the station position must be there too: a load can take
    /// far less than ``partialStartLeadNs`` (30 ms with the player made), and mpv reads from a
    /// little before its seek target (seen: 160 ms, its first read at 3.99 s for a start at
    /// 4.15 s; the player stood still 1.25 s for those bytes at 25 % loss).
    static let partialStartPrerollNs = Nanos.ms(250)
    static let partialStartSpanNs = Nanos.seconds(2)

    /// When ``step(now:)`` next has work.
    var nextWakeup: LocalTime? {
        var wakeups: [LocalTime] = []
        if let wake = plan.nextWakeup(player: playerState) { wakeups.append(wake) }
        if let trace { wakeups.append(LocalTime(ns: trace.nextDueNs)) }
        return wakeups.min()
    }

    /// Corrects the player and writes the trace when they are due.
    func step(now: LocalTime) {
        if maker != nil { takePlayer() }
        run(plan.step(view: view, cache: lookAtCache(now: now), player: playerState, now: now), now: now)
        if Log.isEnabled, let sync {
            noteStart(sync, now: now)
            if !pulseStreamNoted, plan.playing, let stream = Player.pulseStream {
                pulseStreamNoted = true
                Log.debug(
                    .player,
                    "PulseAudio stream: buffer \((stream.bufferNs + Nanos.perMillisecond / 2) / Nanos.perMillisecond) ms, a request every "
                        + "\((stream.requestNs + Nanos.perMillisecond / 2) / Nanos.perMillisecond) ms")
                pulseTimingLogAt = LocalTime(ns: now.ns + 10 * Nanos.perSecond)
            }
            if let at = pulseTimingLogAt, now.ns >= at.ns {
                pulseTimingLogAt = nil
                let updates = Player.pulseTimingUpdates
                Log.debug(.player, "PulseAudio timing updates: \(updates.sent) sent, \(updates.reused) reused")
            }
        }
        guard let trace, trace.isDue(now.ns) else { return }
        let real = NodeClock.realTimeNs()
        let local = clock.localTime(atRealTime: real)
        let estimate = view?.estimate
        trace.write(
            role: role, trueTimeNs: real, localTimeNs: local.ns, djTimeNs: view?.djTime(at: local)?.ns, view: view,
            playerPositionNs: playerPosition(at: local), latencyNs: sync?.player.outputLatencyNs ?? 0,
            offsetNs: role == "dj" ? 0 : estimate.map { $0.offset(at: local) },
            driftPPM: role == "dj" ? 0 : estimate?.driftPPM, live: liveReading?())
    }

    /// Shuts the player down, waiting for it first if it is still being made.
    func shutdown() {
        if let maker, case .success(let made) = maker.waitForResult() { made.shutdown() }
        maker = nil
        sync?.shutdown()
    }

    /// Logs the instant a prepared start let the player go (`-v`; the first-audio benchmark reads it).
    private func noteStart(_ sync: SyncController, now: LocalTime) {
        if let armed = sync.pendingStartNs {
            armedStart = armed
        } else if let armed = armedStart, !sync.isPreparing {
            armedStart = nil
            guard now.ns >= armed, !sync.player.isPaused else { return }
            let trueNs = NodeClock.realTimeNs() - (now.ns - armed)
            Log.debug(.player, "playing from local \(armed) (true \(trueNs))")
        }
    }

    /// Where the player is at local instant `local`, if it is playing.
    private func playerPosition(at local: LocalTime) -> Int64? {
        guard let sync, !sync.isPreparing, let position = sync.player.position() else { return nil }
        return plan.playing ? position.position(at: local.ns) : position.positionNs
    }

    /// The station position at a raw local instant, as the media adapter asks for it. Only
    /// called while the view has a DJ clock (the plan sees to it); without one it
    /// answers the anchor's own position rather than guess.
    /// The station position the player should be at, at a local instant: the station's, held back
    /// by a speaker's delay trim (``PlayerCommand/delayTrim(_:)``).
    private func stationPosition(_ view: StationClockView) -> (Int64) -> Int64 {
        { [delayTrimNs] local in Self.target(view, trimNs: delayTrimNs, atLocal: local) }
    }

    /// Where the player should be at local instant `local` (ns): the station position `trimNs`
    /// earlier, so that the sound comes exactly `trimNs` later than the station's (docs/SPEAKERS.md).
    static func target(_ view: StationClockView, trimNs: Int64, atLocal local: Int64) -> Int64 {
        view.stationPosition(at: LocalTime(ns: local - trimNs)) ?? view.anchor.positionNs
    }
}

/// Makes a node's player on a thread of its own: libmpv is loaded with `dlopen` (about 80 ms on a
/// quiet machine, several times that on a busy one) while the node finds its station.
final class PlayerMaker: Sendable {
    /// What the player is made of; ``make()`` runs on the maker's thread or the caller's.
    struct Recipe: Sendable {
        var options: PlaybackOptions
        var clock: NodeClock
        var inbox: Inbox<NodeInput>
        /// The media cache the player reads a track from while it is still being fetched.
        var cache: MediaCache?

        /// mpv options beyond the player's own. Through PulseAudio, mpv's position (audio-pts) comes from
        /// the sound server's latency, which libpulse by default interpolates with a smoother fitted
        /// over seconds: one late timing report on a busy machine steps it by a millisecond that
        /// takes seconds to fade (scripts/bench-speaker.py `TRACE=1`). `pulse-latency-hacks` has mpv
        /// work it out from each timing report itself. `extra` (``PlayerTuning/mpvOptions``) adds or
        /// replaces some.
        static func mpvOptions(mediaProof: String?, extra: [String: String] = [:]) -> [String: String] {
            var options = ["pulse-latency-hacks": "yes"]
            if let mediaProof { options["http-header-fields"] = "\(MediaServer.proofHeader): \(mediaProof)" }
            options.merge(extra) { _, new in new }
            return options
        }

        /// mpv's `pulse-buffer` when no option sets it.
        static let mpvPulseBufferMs = 100

        /// A request every `requestMs` (``PlayerTuning/pulseRequestMs``) as thousandths of the
        /// `pulse-buffer` in `mpvOptions` (mpv's 100 ms without one), at most half of it, as
        /// ``Player/Options/pulseRequestPermille`` takes it; 0 for the server's default or a buffer
        /// not in milliseconds (`native`).
        static func pulseRequestPermille(mpvOptions: [String: String], requestMs: Int) -> Int {
            let buffer = mpvOptions["pulse-buffer"].map { Int($0) ?? 0 } ?? mpvPulseBufferMs
            guard requestMs > 0, buffer > 0 else { return 0 }
            return min(500, requestMs * 1000 / buffer)
        }

        func make() throws(NodeError) -> SyncController {
            let audio = PlayerDriver.audioOutput(driver: options.audioDriver, soundServer: options.soundServer)
            let started = clock.now()
            do throws(PlayerError) {
                // The volume is the stream's at the sound server where it plays through PulseAudio,
                // heard at once (docs/MEDIA.md, "The volume at the server").
                // No pitch correction: scaletempo, inserted whenever the speed is not 1, shifts audio-pts by
                // tens of milliseconds and turns every nudge into an oscillation. Resampling does not.
                let openStream: (@Sendable (String) -> (any PlayerByteSource)?)? = cache.map { cache in
                    { @Sendable name -> (any PlayerByteSource)? in cache.reader(named: name) }
                }
                let tuning = options.tuning
                let mpvOptions = Self.mpvOptions(mediaProof: options.mediaProof, extra: tuning.mpvOptions)
                let player = try Player(
                    options: Player.Options(
                        audio: audio, pitchCorrection: false, extraOptions: mpvOptions,
                        pulseRequestPermille: Self.pulseRequestPermille(
                            mpvOptions: mpvOptions, requestMs: tuning.pulseRequestMs),
                        pulseTimingReuseMs: tuning.pulseTimingReuseMs, streamVolume: true),
                    clock: clock.nanoClock,
                    openStream: openStream)
                let sync = SyncController(player: player, clock: clock.nanoClock)
                Log.debug(
                    .player, "player made in \((clock.now() - started) / Nanos.perMillisecond) ms (libmpv loaded)")
                let events = player.events
                // mpv's events arrive on its event thread as a stream; this task only forwards failures.
                Task.detached { [inbox] in
                    for await event in events {
                        if case .endOfFile(.error(let message)) = event { inbox.push(.playerFailed(message)) }
                    }
                }
                return sync
            } catch {
                // Without libmpv another audio driver would not help: only the fix, and how to play nothing.
                let message =
                    error.libraryMissing
                    ? "\(error), or use --no-audio."
                    : "The audio player could not start (\(error)); use --no-audio or --audio-driver null."
                throw NodeError(.player, message, cause: error)
            }
        }
    }

    private let made = Mutex<Result<SyncController, NodeError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ recipe: Recipe) {
        let thread = Thread { [self] in
            let result = Result { () throws(NodeError) in try recipe.make() }
            made.withLock { $0 = result }
            done.signal()
            // Wakes the node, which takes the player on its next turn.
            recipe.inbox.push(.timer)
        }
        thread.name = "partyradio.player-maker"
        thread.start()
    }

    /// The player or why it could not be made; nil while it is being made.
    var result: Result<SyncController, NodeError>? { made.withLock { $0 } }

    /// Waits until the player is made (or failed).
    func waitForResult() -> Result<SyncController, NodeError> {
        done.wait()
        done.signal()
        return made.withLock { $0 }!
    }
}
