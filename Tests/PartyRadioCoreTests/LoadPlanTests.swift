import PartyRadioCore
import Testing

@Suite("LoadPlan: what the player loads, from where and when")
struct LoadPlanTests {
    static let track = Track(
        id: "a", title: "A", artist: "", album: "", durationMs: 30_000, source: "http://10.0.0.1:8080/media/a")
    static let other = Track(
        id: "b", title: "B", artist: "", album: "", durationMs: 30_000, source: "http://10.0.0.1:8080/media/b")
    static let player = LoadPlan.PlayerState(isPreparing: false, readingIntervalNs: Nanos.ms(100))
    static let wait = Nanos.seconds(12)
    static let t0 = LocalTime(ns: 1_000_000_000_000)

    /// The station as the DJ sees it: the clock is known.
    static func view(_ track: Track? = track) -> StationClockView {
        StationClockView(snapshot: snapshot(track), estimate: nil, isDJ: true)
    }

    static func snapshot(_ track: Track?) -> StateSnapshot {
        StateSnapshot(
            stationName: "S", nowPlaying: track, anchor: .playing(at: 0, djTime: DJTime(ns: 0)),
            tally: Tally(up: 0, down: 0), listenerCount: 0, queueLength: 1, queueIndex: 0, sentAtNs: 0)
    }

    /// A listener's view before its clock is synchronised.
    static let unsynchronised = StationClockView(snapshot: snapshot(track), estimate: nil, isDJ: false)

    static func listener(partial: Bool = true, pages: Bool = false) -> LoadPlan {
        LoadPlan(
            configuration: .init(hasCache: true, playsPartialFiles: partial, releasesStartupPages: pages))
    }

    /// Asks for a load at `now` and takes the step the driver takes at once (with `cache`).
    static func load(
        _ plan: inout LoadPlan, _ track: Track = track, cache: LoadPlan.CacheState?, now: LocalTime = t0,
        player: LoadPlan.PlayerState? = player
    ) -> [LoadPlan.Command] {
        plan.handle(.load(track, paused: false), view: view(track), now: now)
            + plan.loadNow(view: view(track), cache: cache, player: player, now: now)
    }

    @Test("A file in the cache is loaded from the cache, after asking for it and then what plays next")
    func cacheHit() {
        var plan = Self.listener()
        _ = plan.handle(.prefetch(["http://h/next", "/not/fetched"]), view: Self.view(), now: Self.t0)
        let out = Self.load(&plan, cache: .ready(path: "/cache/a.media"))
        #expect(
            out == [
                .fetch(Self.track.source, now: true), .fetch("http://h/next", now: false),
                .load(Self.track, from: .cachedFile(path: "/cache/a.media"), paused: false),
            ])
        #expect(plan.pending == nil && plan.playing)
    }

    @Test("A file being fetched is loaded from what is there once its start is, else it waits")
    func partialFile() {
        var plan = Self.listener()
        #expect(Self.load(&plan, cache: .fetching(startReadable: false)).last == .stop, "the old track stops")
        #expect(plan.pending != nil && !plan.playing)
        #expect(plan.wanted(view: Self.view(), playerMade: true, now: Self.t0)?.asksStart == true)
        let later = Self.t0 + Nanos.ms(700)
        #expect(
            plan.step(view: Self.view(), cache: .fetching(startReadable: true), player: Self.player, now: later)
                == [.load(Self.track, from: .partialFile, paused: false), .correct], "a tick at once")
    }

    @Test("Without partial files a fetching file is waited for until the cache has taken its time")
    func wholeFilesOnly() {
        var plan = Self.listener(partial: false)
        _ = Self.load(&plan, cache: .fetching(startReadable: false))
        #expect(plan.wanted(view: Self.view(), playerMade: true, now: Self.t0)?.asksStart == false)
        let before = plan.step(
            view: Self.view(), cache: .fetching(startReadable: true), player: Self.player, now: Self.t0 + Self.wait - 1)
        #expect(before.isEmpty, "no partial file, and not yet the URL")
    }

    @Test("The URL when the cache failed, or has taken 12 s, or does not fetch the source, or there is none")
    func url() {
        var failed = Self.listener()
        #expect(Self.load(&failed, cache: .failed("404")).last == .load(Self.track, from: .url, paused: false))

        var slow = Self.listener()
        _ = Self.load(&slow, cache: .absent)
        #expect(slow.step(view: Self.view(), cache: .absent, player: Self.player, now: Self.t0 + Self.wait - 1).isEmpty)
        #expect(
            slow.step(view: Self.view(), cache: .absent, player: Self.player, now: Self.t0 + Self.wait)
                == [.load(Self.track, from: .url, paused: false), .correct], "a tick at once")

        let file = Track(id: "f", title: "F", artist: "", album: "", durationMs: 1_000, source: "/music/f.mp3")
        var dj = LoadPlan(configuration: .init(hasCache: false))
        #expect(Self.load(&dj, file, cache: nil) == [.load(file, from: .url, paused: false)], "no fetch, no wait")
        var listener = Self.listener()
        #expect(Self.load(&listener, file, cache: nil) == [.load(file, from: .url, paused: false)])
    }

    @Test("A file loaded while it was fetched is reloaded from it no longer than 12 s after the first time")
    func partialReload() {
        var plan = Self.listener()
        _ = Self.load(&plan, cache: .fetching(startReadable: true))
        #expect(plan.wanted(view: Self.view(), playerMade: true, now: Self.t0) == nil)
        // The player failed; the planner loads the track again.
        let reload = Self.t0 + Self.wait - 1
        #expect(
            Self.load(&plan, cache: .fetching(startReadable: false), now: reload).last
                == .load(Self.track, from: .partialFile, paused: false))
        #expect(
            Self.load(&plan, cache: .fetching(startReadable: true), now: Self.t0 + Self.wait).last
                == .load(Self.track, from: .url, paused: false))
        // Another track in between: the file is read afresh.
        _ = Self.load(&plan, Self.other, cache: .ready(path: "/b"), now: Self.t0 + Self.wait)
        #expect(
            Self.load(&plan, cache: .fetching(startReadable: true), now: Self.t0 + Self.wait).last
                == .load(Self.track, from: .partialFile, paused: false))
    }

    @Test("A newer load supersedes a pending one; a stop ends it; a pause and a resume carry over to it")
    func pendingSuperseded() {
        var plan = Self.listener()
        _ = Self.load(&plan, cache: .absent)
        _ = Self.load(&plan, Self.other, cache: .absent)
        #expect(plan.pending?.track == Self.other)
        #expect(
            plan.step(view: Self.view(), cache: .ready(path: "/b"), player: Self.player, now: Self.t0)
                == [.load(Self.other, from: .cachedFile(path: "/b"), paused: false), .correct], "a tick at once")

        _ = Self.load(&plan, cache: .absent)
        #expect(plan.handle(.stop, view: Self.view(), now: Self.t0) == [.stop])
        #expect(plan.pending == nil)
        #expect(plan.step(view: Self.view(), cache: .ready(path: "/a"), player: Self.player, now: Self.t0).isEmpty)

        _ = Self.load(&plan, cache: .absent)
        #expect(plan.handle(.pause, view: Self.view(), now: Self.t0) == [.pause])
        #expect(
            plan.step(view: Self.view(), cache: .ready(path: "/a"), player: Self.player, now: Self.t0)
                == [.load(Self.track, from: .cachedFile(path: "/a"), paused: true)])
        #expect(!plan.playing)

        _ = Self.load(&plan, cache: .absent)
        _ = plan.handle(.pause, view: Self.view(), now: Self.t0)
        #expect(plan.handle(.resume, view: Self.view(), now: Self.t0).isEmpty, "nothing to resume yet")
        #expect(
            plan.step(view: Self.view(), cache: .ready(path: "/a"), player: Self.player, now: Self.t0)
                == [.load(Self.track, from: .cachedFile(path: "/a"), paused: false)])
    }

    @Test("Nothing loads or resumes before the clock is known, or before the player is made")
    func waitsForClockAndPlayer() {
        var plan = Self.listener()
        #expect(plan.handle(.load(Self.track, paused: false), view: Self.unsynchronised, now: Self.t0).isEmpty)
        #expect(plan.pending == nil)
        #expect(plan.handle(.resume, view: Self.unsynchronised, now: Self.t0).isEmpty)
        #expect(plan.handle(.load(Self.track, paused: false), view: nil, now: Self.t0).isEmpty)

        let file = Track(id: "f", title: "F", artist: "", album: "", durationMs: 1_000, source: "/music/f.mp3")
        var dj = LoadPlan(configuration: .init())
        #expect(Self.load(&dj, file, cache: nil, player: nil) == [.stop], "no player yet: waits")
        #expect(dj.step(view: Self.view(file), cache: nil, player: nil, now: Self.t0 + 1).isEmpty, "stops once")
        #expect(dj.nextWakeup(player: nil) == Self.t0 + 1 + LoadPlan.fastTickIntervalNs)
        #expect(
            dj.step(view: Self.view(file), cache: nil, player: Self.player, now: Self.t0 + 2)
                == [.load(file, from: .url, paused: false), .correct], "a tick at once")

        var silent = LoadPlan(configuration: .init(playsAudio: false))
        #expect(Self.load(&silent, file, cache: nil).isEmpty, "--no-audio")
    }

    @Test("The station's track is fetched at once, what plays next after it; only what the cache fetches")
    func fetches() {
        var plan = Self.listener()
        #expect(
            plan.handle(.fetch(Self.track.source), view: nil, now: Self.t0) == [.fetch(Self.track.source, now: true)])
        #expect(plan.handle(.fetch("/music/f.mp3"), view: nil, now: Self.t0).isEmpty)
        #expect(
            plan.handle(.prefetch([Self.other.source]), view: nil, now: Self.t0) == [
                .fetch(Self.other.source, now: false)
            ])
        var dj = LoadPlan(configuration: .init())
        #expect(dj.handle(.fetch(Self.track.source), view: Self.view(), now: Self.t0).isEmpty, "no cache")
    }

    @Test("The start-up pages are released 5 s after the player plays a newly loaded track, once per load")
    func pageOut() {
        var plan = Self.listener(pages: true)
        _ = Self.load(&plan, cache: .ready(path: "/a"))
        let preparing = LoadPlan.PlayerState(isPreparing: true, readingIntervalNs: Nanos.ms(100))
        #expect(
            !plan.step(view: Self.view(), cache: nil, player: preparing, now: Self.t0 + Nanos.seconds(9)).contains(
                .releasePages))
        let playing = Self.t0 + Nanos.seconds(10)
        #expect(!plan.step(view: Self.view(), cache: nil, player: Self.player, now: playing).contains(.releasePages))
        let justBefore = playing + Nanos.seconds(5) - 1
        #expect(!plan.step(view: Self.view(), cache: nil, player: Self.player, now: justBefore).contains(.releasePages))
        let due = playing + Nanos.seconds(5)
        #expect(plan.step(view: Self.view(), cache: nil, player: Self.player, now: due).contains(.releasePages))
        #expect(
            !plan.step(view: Self.view(), cache: nil, player: Self.player, now: due + Nanos.seconds(9)).contains(
                .releasePages))
        // Another load: again 5 s after it plays.
        let next = due + Nanos.seconds(10)
        _ = Self.load(&plan, Self.other, cache: .ready(path: "/b"), now: next)
        _ = plan.step(view: Self.view(Self.other), cache: nil, player: Self.player, now: next)
        #expect(
            plan.step(view: Self.view(Self.other), cache: nil, player: Self.player, now: next + Nanos.seconds(5))
                .contains(.releasePages))

        var off = Self.listener(pages: false)
        _ = Self.load(&off, cache: .ready(path: "/a"))
        for second in 0...20 {
            let now = Self.t0 + Nanos.seconds(Double(second))
            #expect(!off.step(view: Self.view(), cache: nil, player: Self.player, now: now).contains(.releasePages))
        }
    }

    @Test("A playing player is corrected each tick (early by 2/5 of a settled one), not while paused")
    func ticks() {
        var plan = Self.listener()
        _ = Self.load(&plan, cache: .ready(path: "/a"))
        #expect(plan.step(view: Self.view(), cache: nil, player: Self.player, now: Self.t0) == [.correct])
        #expect(plan.nextWakeup(player: Self.player) == Self.t0 + Nanos.ms(100))
        #expect(plan.step(view: Self.view(), cache: nil, player: Self.player, now: Self.t0 + Nanos.ms(99)).isEmpty)
        #expect(
            plan.step(view: Self.view(), cache: nil, player: Self.player, now: Self.t0 + Nanos.ms(100)) == [.correct])
        let settled = LoadPlan.PlayerState(isPreparing: false, readingIntervalNs: Nanos.ms(500))
        let last = Self.t0 + Nanos.ms(100)
        #expect(plan.step(view: Self.view(), cache: nil, player: settled, now: last + Nanos.ms(299)).isEmpty)
        #expect(plan.step(view: Self.view(), cache: nil, player: settled, now: last + Nanos.ms(300)) == [.correct])
        // Without the clock the tick passes without a correction.
        let tick = last + Nanos.ms(900)
        #expect(plan.step(view: Self.unsynchronised, cache: nil, player: settled, now: tick).isEmpty)
        #expect(plan.nextWakeup(player: settled) == tick + Nanos.ms(500))
        _ = plan.handle(.pause, view: Self.view(), now: tick)
        #expect(plan.step(view: Self.view(), cache: nil, player: settled, now: tick + Nanos.seconds(5)).isEmpty)
        #expect(plan.nextWakeup(player: settled) == nil)
        #expect(plan.handle(.resume, view: Self.view(), now: tick) == [.resume])
        #expect(plan.playing)
    }
}
