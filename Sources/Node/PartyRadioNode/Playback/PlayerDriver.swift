import Dispatch
import Foundation
import PartyRadioCore
import PartyRadioHTTP
import PartyRadioMedia
import Synchronization

/// Carries out the machine's player commands on libmpv and keeps the player on the station
/// position between them (the `SyncController`'s corrections), and writes `--trace`.
///
/// Owned by the node's thread: the runtime calls it; mpv's event thread only pushes a failure
/// into the node's inbox.
final class PlayerDriver {
    /// The player, once made (never with `--no-audio`).
    private var sync: SyncController?
    /// The player being made on its own thread (a listener's), until ``takePlayer()`` has it.
    private var maker: PlayerMaker?
    /// Why the player could not be made in the background: the runtime stops the node with it.
    private(set) var failure: NodeError?
    private let trace: TraceWriter?
    private let clock: NodeClock
    private let role: String
    private let inbox: Inbox<NodeInput>
    /// Whether this node plays at all (false with `--no-audio`).
    let playsAudio: Bool
    /// Where the station is, as the machine last said.
    private(set) var view: StationClockView?
    private var playing = false
    /// The local volume last asked for (0–100).
    private var volume = 100
    private var lastTick = LocalTime(ns: 0)
    /// A listener's media cache (nil for the DJ, which plays its own files, and with `--no-audio`).
    private let cache: MediaCache?
    /// A load waiting for its file to be in the cache, or for the player to be made.
    private var pending: (track: Track, paused: Bool, since: LocalTime)?
    /// The track last loaded from its file while the cache was still fetching it, and since when.
    private var partialLoad: (source: String, since: LocalTime)?
    /// Whether a track being fetched is played from what is there (``PlayerTuning/playsPartialFiles``).
    private let playsPartialFiles: Bool
    /// What the machine last asked to fetch ahead (asked again after each load: the station's
    /// own track goes first, and a prefetch it stopped is queued again).
    private var prefetching: [String] = []
    /// The last track ``stationPlays(_:)`` was told of.
    private var announced: String?
    /// The local instant a prepared start is armed for, until it has happened (for `-v`).
    private var armedStart: Int64?
    /// Where the next release of the pages a start touched (``StartupPages``) stands: due a while
    /// after the player plays a newly loaded track, then done until the next load (never without
    /// ``PlayerTuning/releasesStartupPages``).
    private var pageOut = PageOut.off
    /// Whether `-v` has said what PulseAudio granted the player's stream (once).
    private var pulseStreamNoted = false
    /// When the timing updates so far are logged (`-v`), 10 s after the stream was first noted.
    private var pulseTimingLogAt: LocalTime?
    private enum PageOut: Equatable {
        case off, waiting
        case due(LocalTime)
        case done
    }

    /// How long a load waits for the cache before the player streams the URL itself. Long: the
    /// download retries and resumes by itself, and on a link so lossy that it is slow, mpv's one
    /// stream (competing with it) would only starve.
    static let cacheWaitNs = Nanos.seconds(12)
    /// While a start is being prepared, so the player is unpaused as soon as it is ready. Otherwise
    /// the corrector says how often (``SyncController/readingIntervalNs``: 100 ms, 500 ms settled).
    static let fastTickIntervalNs = Nanos.ms(10)
    /// How long the player plays before the start-up pages are released: by then every path
    /// that playing a track takes (demuxing, decoding, the audio output) has run and stays resident.
    static let pageOutAfterNs = Nanos.seconds(5)

    /// A machine with no sound card gets mpv's null output straight away, instead of ALSA and
    /// PipeWire filling the terminal with their complaints on the way to the same fallback.
    static var hasSoundDevice: Bool {
        FileManager.default.fileExists(atPath: "/dev/snd") || ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil
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
        playsPartialFiles = options.tuning.playsPartialFiles
        if options.tuning.releasesStartupPages { pageOut = .waiting }
        trace = try options.tracePath.map { path throws(NodeError) in try TraceWriter(path: path) }
        guard !options.noAudio else {
            cache = nil
            return
        }
        // The media cache first: its thread, and libcurl's load (about 5 ms), come before libmpv's
        // load begins, which would hold both up (see the note on PlayerMaker).
        if let cacheDirectory, options.tuning.mediaCache {
            // A private station's media needs proof of its code, the cache's fetches as mpv's.
            cache = try? MediaCache(
                directory: cacheDirectory, headers: options.mediaProof.map { [(MediaServer.proofHeader, $0)] } ?? [])
            if cache == nil { Log.debug(.player, "no media cache in \(cacheDirectory.path): streaming") }
        } else {
            cache = nil
        }
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

    func execute(_ command: PlayerCommand) {
        if case .volume(let level) = command {  // needs no station: the DJ may set it before anything plays
            volume = level
            try? sync?.player.setVolume(level)
            return
        }
        if case .prefetch(let urls) = command {  // needs no player: only the cache
            prefetching = urls
            prefetch()
            return
        }
        guard playsAudio, let view else { return }
        takePlayer()
        Log.debug(.player, "\(command)")
        let position = stationPosition(view)
        do {
            switch command {
            case .load(let track, let paused):
                // Loads and resumes come only once the DJ clock is known (the planner sees to it).
                guard view.stationPosition(at: clock.now()) != nil else { return }
                pending = nil
                // Another track: a later load of this one may read its partial file afresh.
                if partialLoad?.source != track.source { partialLoad = nil }
                if let cache, MediaCache.handles(track.source) {
                    cache.request(track.source, now: true)
                    prefetch()
                }
                if sync != nil, let source = readySource(of: track, waitingSince: clock.now()) {
                    try load(track, from: source, paused: paused)
                } else {
                    // The file or the player is not there yet: the old track stops (it is no longer
                    // the station's), and step() loads this one as soon as both are.
                    try sync?.stop()
                    playing = false
                    pending = (track, paused, clock.now())
                }
            case .pause:
                if pending != nil { pending?.paused = true }
                try sync?.pause()
                playing = false
            case .resume:
                guard view.stationPosition(at: clock.now()) != nil else { return }
                if pending != nil {
                    pending?.paused = false
                    return
                }
                try sync?.resume(stationPositionAt: position)
                playing = sync != nil
            case .stop:
                pending = nil
                try sync?.stop()
                playing = false
            case .volume(let level):
                try sync?.player.setVolume(level)
            case .prefetch:
                break  // done above
            }
        } catch {
            if case .load = command { inbox.push(.playerFailed("\(error)")) }
            Log.debug(.player, "\(command) failed: \(error)")
        }
    }

    /// Loads `track` from `source` (its URL or the cache's file) at the station position.
    private func load(_ track: Track, from source: String, paused: Bool) throws(PlayerError) {
        guard let sync, let view else { return }
        if cache != nil {
            let origin =
                source == track.source
                ? "from its URL"
                : source.hasPrefix(Player.streamProtocol) ? "from the cache while it downloads" : "from the cache"
            Log.debug(.player, "playing \(track.id) \(origin)")
        }
        if pageOut != .off { pageOut = .waiting }  // a load touches pages of its own (demuxers, decoders)
        if paused {
            try sync.loadPaused(source, startNs: stationPosition(view)(clock.now().ns))
        } else {
            try sync.load(source, stationPositionAt: stationPosition(view))
        }
        playing = !paused
    }

    /// The station plays `track` (a listener's `.state` report): its file is fetched at once, while
    /// the clock is still being synchronised, before the planner asks for the load.
    func stationPlays(_ track: Track) {
        guard let cache, announced != track.id else { return }
        announced = track.id
        cache.request(track.source, now: true)
    }

    /// Asks the cache for what plays next, after whatever the station's track needs (the machine
    /// plans it: `MediaCachePlan.prefetch`, with the catalog tracks' sources the DJ sends).
    private func prefetch() {
        guard let cache else { return }
        for url in prefetching where MediaCache.handles(url) { cache.request(url, now: false) }
    }

    /// What to load for `track`: its file once the cache has it; while it is being fetched, the
    /// file as far as it has come (read by the player as the rest arrives: docs/MEDIA.md) once its
    /// first bytes are there; its URL when the cache failed, or has taken ``cacheWaitNs`` since
    /// `since` (or since the partial file was first loaded), or when there is no cache; nil while
    /// it waits for the first bytes.
    private func readySource(of track: Track, waitingSince since: LocalTime) -> String? {
        guard let cache, MediaCache.handles(track.source) else { return track.source }
        switch cache.status(of: track.source) {
        case .ready(let path): return path
        case .failed(let reason):
            Log.debug(.player, "cache failed (\(reason)): streaming \(track.source)")
            return track.source
        case .fetching where playsPartialFiles && partialLoad?.source != track.source && isReadable(track, in: cache):
            partialLoad = (track.source, clock.now())
            return Player.streamURL(named: MediaCache.streamName(for: track.source))
        case .fetching where partialLoad?.source == track.source:
            // Loaded before from the partial file: a reload (the player failed) waits no longer than that did.
            guard let first = partialLoad?.since, clock.now() - first >= Self.cacheWaitNs else {
                return Player.streamURL(named: MediaCache.streamName(for: track.source))
            }
            Log.debug(.player, "cache too slow: streaming \(track.source)")
            return track.source
        case .fetching, .absent:
            guard clock.now() - since >= Self.cacheWaitNs else { return nil }
            Log.debug(.player, "cache too slow: streaming \(track.source)")
            return track.source
        }
    }

    /// Whether `track`'s file, still being fetched, has the bytes a start at the station position
    /// needs: what the player reads first, and ``partialStartSpanNs`` of audio from just ahead of
    /// the position (the cache then fetches from there first).
    private func isReadable(_ track: Track, in cache: MediaCache) -> Bool {
        let header = Player.streamStartBytes
        guard track.durationMs > 0, let position = view?.stationPosition(at: clock.now()) else {
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

    /// Loads a pending track once the player is made and the track's file is in the cache (or
    /// its URL is to be streamed).
    private func loadPendingIfReady() {
        guard let (track, paused, since) = pending, takePlayer(), let view,
            view.stationPosition(at: clock.now()) != nil, let source = readySource(of: track, waitingSince: since)
        else { return }
        pending = nil
        do { try load(track, from: source, paused: paused) } catch {
            inbox.push(.playerFailed("\(error)"))
        }
    }

    /// How long after the last tick the next is due.
    private func tickInterval(_ sync: SyncController) -> Int64 {
        sync.isPreparing ? Self.fastTickIntervalNs : sync.readingIntervalNs
    }

    /// How much earlier than due a tick runs when the node's thread is awake anyway: a settled tick
    /// (500 ms) from 300 ms on, so that it rides on the listener's progress report (every 250 ms) or
    /// a snapshot instead of waking the thread itself; none at the faster intervals.
    static func earlyBy(interval: Int64) -> Int64 {
        interval > Nanos.ms(100) ? interval * 2 / 5 : 0
    }

    /// When ``step()`` next has work.
    var nextWakeup: LocalTime? {
        var wakeups: [LocalTime] = []
        if pending != nil { wakeups.append(clock.now() + Self.fastTickIntervalNs) }
        if let sync, playing { wakeups.append(lastTick + tickInterval(sync)) }
        if let trace { wakeups.append(LocalTime(ns: trace.nextDueNs)) }
        return wakeups.min()
    }

    /// Corrects the player and writes the trace when they are due.
    func step() {
        if maker != nil { takePlayer() }
        if pending != nil { loadPendingIfReady() }
        let now = clock.now()
        if let sync, playing, let view {
            let interval = tickInterval(sync)
            if now - lastTick >= interval - Self.earlyBy(interval: interval) {
                lastTick = now
                // No corrections against a guessed clock: while the estimate is lost (the DJ's clock
                // stepped), the player plays on untouched until it is back (and the next look is a
                // tick later, not at once: the tick's instant is past).
                if view.stationPosition(at: now) != nil { sync.tick(stationPositionAt: stationPosition(view)) }
            }
        }
        if Log.isEnabled, let sync {
            noteStart(sync, now: now)
            if !pulseStreamNoted, playing, let stream = Player.pulseStream {
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
        if let sync { pageOutWhenPlaying(sync, now: now) }
        guard let trace, trace.isDue(now.ns) else { return }
        let real = NodeClock.realTimeNs()
        let local = clock.localTime(atRealTime: real)
        let estimate = view?.estimate
        trace.write(
            role: role, trueTimeNs: real, localTimeNs: local.ns, djTimeNs: view?.djTime(at: local)?.ns, view: view,
            playerPositionNs: playerPosition(at: local), latencyNs: sync?.player.outputLatencyNs ?? 0,
            offsetNs: role == "dj" ? 0 : estimate.map { $0.offset(at: local) },
            driftPPM: role == "dj" ? 0 : estimate?.driftPPM)
    }

    /// Shuts the player down, waiting for it first if it is still being made.
    func shutdown() {
        if let maker, case .success(let made) = maker.waitForResult() { made.shutdown() }
        maker = nil
        sync?.shutdown()
    }

    /// Releases the pages the start touched, ``pageOutAfterNs`` after the player plays a newly loaded
    /// track, on a thread of its own (a few milliseconds of `madvise`; the node's thread keeps time).
    private func pageOutWhenPlaying(_ sync: SyncController, now: LocalTime) {
        guard playing, !sync.isPreparing else { return }
        switch pageOut {
        case .off, .done: return
        case .waiting:
            pageOut = .due(now + Self.pageOutAfterNs)
            return
        case .due(let at):
            guard now >= at else { return }
            pageOut = .done
        }
        let thread = Thread {
            if let release = StartupPages.release() { Log.debug(.player, "\(release)") }
        }
        thread.name = "partyradio.pageout"
        thread.start()
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
        return playing ? position.position(at: local.ns) : position.positionNs
    }

    /// The station position at a raw local instant, as the media adapter asks for it. Only
    /// called while the view has a DJ clock (see ``execute(_:)`` and ``step()``); without one it
    /// answers the anchor's own position rather than guess.
    private func stationPosition(_ view: StationClockView) -> (Int64) -> Int64 {
        { local in view.stationPosition(at: LocalTime(ns: local)) ?? view.anchor.positionNs }
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
            let audio: Player.Options.AudioOutput =
                options.audioDriver.map { $0 == "null" ? .none : .driver($0) }
                ?? (PlayerDriver.hasSoundDevice ? .automatic : .none)
            let started = clock.now()
            do throws(PlayerError) {
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
                        pulseTimingReuseMs: tuning.pulseTimingReuseMs),
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
