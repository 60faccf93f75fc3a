import PartyRadioCore

/// A listener's media cache on the simulated LAN: each source it is asked for arrives after a time
/// drawn from the run's seed, the source and the attempt (so the draws take nothing from the
/// network's generator): most in under 4 s, a fifth slowly (10–40 s, so that the load plan gives
/// up on some), one in twenty fails; a file being fetched has the bytes a start needs from half its
/// time on. The checker reads its record of what was where when (``state(of:at:)``).
struct SimCache {
    /// One fetch of a source: when it was asked for, and when it finishes or fails.
    struct Fetch {
        var askedAt: Int64
        var readableAt: Int64
        var doneAt: Int64
        var fails: Bool
    }

    let seed: UInt64
    /// Every fetch of each source, in order (a failed one is fetched again when asked again).
    private(set) var fetches: [String: [Fetch]] = [:]

    init(seed: UInt64) { self.seed = seed }

    /// The cache is asked for `url` at true time `t` (`now` or not: the simulated cache fetches
    /// everything at once, the order does not change when a file is there).
    mutating func request(_ url: String, at t: Int64) {
        if let last = fetches[url]?.last, !(last.fails && t >= last.doneAt) { return }
        var random = SplitMix64(seed: seed ^ FNV1a64.hash(Array(url.utf8)) &+ UInt64(fetches[url]?.count ?? 0))
        let kind = random.next() % 20
        let unit = Double(random.next() % 1_000_000) / 1_000_000
        let durationNs: Int64 =
            switch kind {
            case 0: Int64(1e9 + unit * 2e9)  // fails after 1–3 s
            case 1, 2, 3, 4: Int64(10e9 + unit * 30e9)  // slow: the plan gives up on some
            default: Int64(0.1e9 + unit * 3.9e9)
            }
        fetches[url, default: []].append(
            Fetch(askedAt: t, readableAt: t + durationNs / 2, doneAt: t + durationNs, fails: kind == 0))
    }

    /// The cache's state of `url` at true time `t`, as the load plan is told it.
    func state(of url: String, at t: Int64) -> LoadPlan.CacheState {
        guard let fetch = fetches[url]?.last(where: { $0.askedAt <= t }) else { return .absent }
        if t >= fetch.doneAt { return fetch.fails ? .failed("simulated") : .ready(path: "/cache/\(url)") }
        return .fetching(startReadable: !fetch.fails && t >= fetch.readableAt)
    }
}
