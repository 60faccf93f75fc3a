/// What a node's player loads, from where and when (docs/MEDIA.md, "The load plan"): the machine's
/// player commands come in, with the station view, the media cache's state of the track in
/// question, the player's state and the time; what the player driver is to do goes out. Pure: the
/// driver reads the cache and the player, carries the commands out on libmpv and the cache, and
/// decides nothing itself (as ``RangeFetchPlan`` is to the cache's downloads).
///
/// - A load waits until the player is made and the clock is known. It goes to the cache's finished
///   file; while the file is being fetched, to what is there of it (the partial file) once the bytes
///   a start at the station position needs have come; to the URL when the cache failed or has
///   taken ``Configuration/cacheWaitNs``, or when there is no cache or the cache does not fetch
///   that source. A load that must wait stops the old track (it is no longer the station's) and
///   is pending: a newer load, or a stop, supersedes it.
/// - The station's track is fetched at once (``PlayerCommand/fetch(_:)``, and with every load), the
///   tracks that play next after it (``PlayerCommand/prefetch(_:)``, asked again after each load).
/// - While the player plays, it is corrected every tick (``PlayerState/readingIntervalNs``, 10 ms
///   while a start is prepared), and ``Configuration/pageOutAfterNs`` after it plays a newly loaded
///   track the pages the start touched are released, once per load.
public struct LoadPlan: Sendable {
    public struct Configuration: Sendable {
        /// False with `--no-audio`: nothing is loaded.
        public var playsAudio: Bool
        /// Whether the node has a media cache (a listener's; the DJ plays its own files).
        public var hasCache: Bool
        /// Whether a track still being fetched is played from what is there.
        public var playsPartialFiles: Bool
        /// Whether the start-up pages are released after each load.
        public var releasesStartupPages: Bool
        /// How long a load waits for the cache before the player streams the URL itself. Long: the
        /// download retries and resumes by itself, and on a link so lossy that it is slow, mpv's one
        /// stream (competing with it) would only starve.
        public var cacheWaitNs: Int64
        /// How long the player plays before the start-up pages are released: by then every path
        /// that playing a track takes (demuxing, decoding, the audio output) has run and stays resident.
        public var pageOutAfterNs: Int64

        public init(
            playsAudio: Bool = true, hasCache: Bool = false, playsPartialFiles: Bool = true,
            releasesStartupPages: Bool = true, cacheWaitNs: Int64 = Nanos.seconds(12),
            pageOutAfterNs: Int64 = Nanos.seconds(5)
        ) {
            self.playsAudio = playsAudio
            self.hasCache = hasCache
            self.playsPartialFiles = playsPartialFiles
            self.releasesStartupPages = releasesStartupPages
            self.cacheWaitNs = cacheWaitNs
            self.pageOutAfterNs = pageOutAfterNs
        }
    }

    /// Where the media cache stands with one source, as the driver read it.
    public enum CacheState: Hashable, Sendable {
        case absent
        /// Being fetched; `startReadable`: the bytes a start at the station position needs are
        /// there (only asked when ``Wanted/asksStart``; false otherwise).
        case fetching(startReadable: Bool)
        case ready(path: String)
        case failed(String)
    }

    /// The player as the driver read it (nil in the calls: not made yet).
    public struct PlayerState: Hashable, Sendable {
        /// A start is being prepared: the timed unpause has not happened yet.
        public var isPreparing: Bool
        /// How often the corrector wants to look at the player now.
        public var readingIntervalNs: Int64

        public init(isPreparing: Bool, readingIntervalNs: Int64) {
            self.isPreparing = isPreparing
            self.readingIntervalNs = readingIntervalNs
        }
    }

    /// Where a load reads the track from.
    public enum Source: Hashable, Sendable {
        /// The track's URL, streamed by the player itself.
        case url
        /// The cache's finished file.
        case cachedFile(path: String)
        /// The cache's file while it is still being fetched (read as the rest arrives).
        case partialFile
    }

    /// What the driver does, in order.
    public enum Command: Hashable, Sendable {
        /// Ask the cache for `url`: `now`, before every download waiting (the station plays it),
        /// otherwise after them.
        case fetch(String, now: Bool)
        /// Load the track at the station position (or hold it paused there).
        case load(Track, from: Source, paused: Bool)
        case pause
        /// Start again from the station position.
        case resume
        case stop
        /// Correct the player against the station position.
        case correct
        /// Release the pages the start touched.
        case releasePages
    }

    /// A load waiting for the player, the clock or the cache.
    public struct Pending: Hashable, Sendable {
        public var track: Track
        public var paused: Bool
        /// When the machine asked for it: the cache gets ``Configuration/cacheWaitNs`` from here.
        public var since: LocalTime
    }

    /// A track whose cache state the next ``step(view:cache:player:now:)`` needs, and whether the
    /// cache is to be asked if a start's bytes are there (which also tells the download to fetch
    /// them first, so the driver asks only then).
    public struct Wanted: Hashable, Sendable {
        public var track: Track
        public var asksStart: Bool
    }

    private enum PageOut: Hashable, Sendable {
        case off, waiting
        case due(LocalTime)
        case done
    }

    /// How often a pending load is looked at, and the player corrected while a start is prepared
    /// (so it is unpaused as soon as it is ready).
    public static let fastTickIntervalNs = Nanos.ms(10)

    public let configuration: Configuration
    public private(set) var pending: Pending?
    /// Whether the player plays (loaded and not paused).
    public private(set) var playing = false
    /// The track last loaded from its partial file, and since when: a reload of it (the player
    /// failed) waits no longer than ``Configuration/cacheWaitNs`` from then.
    private var partialLoad: (source: String, since: LocalTime)?
    /// What the machine last asked to fetch ahead (asked again after each load: the station's own
    /// track goes first, and a prefetch it stopped is queued again).
    public private(set) var prefetching: [String] = []
    private var lastTick = LocalTime(ns: 0)
    private var lastLook = LocalTime(ns: 0)
    private var pageOut: PageOut

    public init(configuration: Configuration) {
        self.configuration = configuration
        pageOut = configuration.releasesStartupPages ? .waiting : .off
    }

    /// Whether the cache fetches `url` (http or https; a DJ's file path is played as it is).
    public static func isCached(_ url: String) -> Bool {
        url.hasPrefix("http://") || url.hasPrefix("https://")
    }

    /// One of the machine's player commands (`.volume` is the driver's own: no decision).
    /// A `.load` becomes pending; the driver then calls ``loadNow(view:cache:player:now:)`` at once,
    /// after carrying out the fetches this returns, so the cache's state it reads includes them.
    public mutating func handle(_ command: PlayerCommand, view: StationClockView?, now: LocalTime) -> [Command] {
        lastLook = now
        switch command {
        case .prefetch(let urls):
            prefetching = urls
            return fetchesAhead()
        case .fetch(let url):
            return isFetched(url) ? [.fetch(url, now: true)] : []
        case .volume, .delayTrim:
            return []
        default:
            break
        }
        guard configuration.playsAudio, let view else { return [] }
        let clockKnown = view.stationPosition(at: now) != nil
        switch command {
        case .load(let track, let paused):
            // Loads and resumes come only once the DJ clock is known (the planner sees to it).
            guard clockKnown else { return [] }
            // Another track: a later load of this one may read its partial file afresh.
            if partialLoad?.source != track.source { partialLoad = nil }
            pending = Pending(track: track, paused: paused, since: now)
            return isFetched(track.source) ? [.fetch(track.source, now: true)] + fetchesAhead() : []
        case .pause:
            pending?.paused = true
            playing = false
            return [.pause]
        case .resume:
            guard clockKnown else { return [] }
            if pending != nil {
                pending?.paused = false
                return []
            }
            playing = true
            return [.resume]
        case .stop:
            pending = nil
            playing = false
            return [.stop]
        case .volume, .delayTrim, .prefetch, .fetch:
            return []
        }
    }

    /// The track whose cache state the next ``step(view:cache:player:now:)`` needs (nil: none; the
    /// cache is then not asked): a pending load of a source the cache fetches, once the player is
    /// made and the clock known.
    public func wanted(view: StationClockView?, playerMade: Bool, now: LocalTime) -> Wanted? {
        guard let pending, playerMade, isFetched(pending.track.source), view?.stationPosition(at: now) != nil else {
            return nil
        }
        let asks = configuration.playsPartialFiles && partialLoad?.source != pending.track.source
        return Wanted(track: pending.track, asksStart: asks)
    }

    /// Loads the track a `.load` just asked for if it can, at once (the driver calls this right
    /// after ``handle(_:view:now:)`` and the fetches it returned). If it must wait, the old track
    /// stops (it is no longer the station's) and ``step(view:cache:player:now:)`` loads this one as
    /// soon as the player and the file are there. `cache`: the state of the
    /// ``wanted(view:playerMade:now:)`` track.
    public mutating func loadNow(
        view: StationClockView?, cache: CacheState?, player: PlayerState?, now: LocalTime
    ) -> [Command] {
        guard pending != nil else { return [] }
        let load = loadIfReady(view: view, cache: cache, player: player, now: now)
        guard load.isEmpty else { return load }
        playing = false
        return [.stop]
    }

    /// Loads the pending track once it can, corrects the player when a tick is due, releases the
    /// start-up pages when due. `cache`: the state of the ``wanted(view:playerMade:now:)`` track.
    public mutating func step(
        view: StationClockView?, cache: CacheState?, player: PlayerState?, now: LocalTime
    ) -> [Command] {
        var out = loadIfReady(view: view, cache: cache, player: player, now: now)
        guard let player else { return out }
        if playing, let view {
            let interval = Self.tickInterval(player)
            if now - lastTick >= interval - Self.earlyBy(interval: interval) {
                lastTick = now
                // No corrections against a guessed clock: while the estimate is lost (the DJ's clock
                // stepped), the player plays on untouched until it is back (and the next look is a
                // tick later, not at once: the tick's instant is past).
                if view.stationPosition(at: now) != nil { out.append(.correct) }
            }
        }
        if playing, !player.isPreparing {
            switch pageOut {
            case .off, .done: break
            case .waiting: pageOut = .due(now + configuration.pageOutAfterNs)
            case .due(let at):
                if now >= at {
                    pageOut = .done
                    out.append(.releasePages)
                }
            }
        }
        return out
    }

    private mutating func loadIfReady(
        view: StationClockView?, cache: CacheState?, player: PlayerState?, now: LocalTime
    ) -> [Command] {
        lastLook = now
        guard let pending, player != nil, view?.stationPosition(at: now) != nil,
            let source = source(of: pending, cache: cache, now: now)
        else { return [] }
        self.pending = nil
        if pageOut != .off { pageOut = .waiting }  // a load touches pages of its own (demuxers, decoders)
        playing = !pending.paused
        return [.load(pending.track, from: source, paused: pending.paused)]
    }

    /// The player failed to load: it plays nothing until the next load.
    public mutating func loadFailed() { playing = false }

    /// When ``step(view:cache:player:now:)`` next has work.
    public func nextWakeup(player: PlayerState?) -> LocalTime? {
        var wakeups: [LocalTime] = []
        if pending != nil { wakeups.append(lastLook + Self.fastTickIntervalNs) }
        if let player, playing { wakeups.append(lastTick + Self.tickInterval(player)) }
        return wakeups.min()
    }

    /// How much earlier than due a tick runs when the node's thread is awake anyway: a settled tick
    /// (500 ms) from 300 ms on, so that it rides on the listener's progress report (every 250 ms) or
    /// a snapshot instead of waking the thread itself; none at the faster intervals.
    public static func earlyBy(interval: Int64) -> Int64 {
        interval > Nanos.ms(100) ? interval * 2 / 5 : 0
    }

    private static func tickInterval(_ player: PlayerState) -> Int64 {
        player.isPreparing ? fastTickIntervalNs : player.readingIntervalNs
    }

    private func isFetched(_ url: String) -> Bool { configuration.hasCache && Self.isCached(url) }

    private func fetchesAhead() -> [Command] {
        prefetching.filter(isFetched).map { .fetch($0, now: false) }
    }

    /// Where to load `pending` from now, or nil while it waits for the cache.
    private mutating func source(of pending: Pending, cache: CacheState?, now: LocalTime) -> Source? {
        let url = pending.track.source
        guard isFetched(url) else { return .url }
        guard let cache else { return nil }
        switch cache {
        case .ready(let path): return .cachedFile(path: path)
        case .failed: return .url
        case .fetching(startReadable: true) where configuration.playsPartialFiles && partialLoad?.source != url:
            partialLoad = (url, now)
            return .partialFile
        case .fetching where partialLoad?.source == url:
            // Loaded before from the partial file: a reload (the player failed) waits no longer than that did.
            guard let first = partialLoad?.since, now - first >= configuration.cacheWaitNs else { return .partialFile }
            return .url
        case .fetching, .absent:
            return now - pending.since >= configuration.cacheWaitNs ? .url : nil
        }
    }
}
