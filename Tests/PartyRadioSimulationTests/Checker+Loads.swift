import PartyRadioCore

/// What the listeners' players loaded, from where and when, restated from the station and the
/// simulated cache rather than asked of the load plan (docs/MEDIA.md, "The load plan"):
/// - the station's track is asked of the cache at once, no later than the listener tells its user
///   of it, before the clock is synchronised;
/// - a synchronised listener that hears the station has loaded the station's track at most
///   ``loadWithinNs`` after it learned of it (or synchronised): the cache gets 12 s, then the URL;
/// - it never loads a track the station did not play in the ``loadWithinNs`` before;
/// - it loads the cache's finished file only when the file is there, the partial file only when a
///   start's bytes are, the URL only when the cache failed or had 12 s since the machine asked.
extension Checker {
    /// The cache's time (12 s), and the plan's poll (10 ms), with room for the network's delay.
    static let loadWithinNs: Int64 = 12_500_000_000
    static let cacheWaitNs: Int64 = 12_000_000_000

    /// When `node` last learned that the station plays `trackID`: its report of the track.
    static func learned(_ trackID: String, by node: SimNode) -> Int64? {
        node.reports.last { report in
            switch report.event {
            case .tunedIn(let station): station.snapshot.nowPlaying?.id == trackID
            case .state(let snapshot, _, .track): snapshot.nowPlaying?.id == trackID
            default: false
            }
        }?.time
    }

    /// Every half second: a listener that has known the station's track for long enough plays it.
    func checkLoading(lan: SimLAN, log: inout Log) {
        guard dj.alive, let machine = djMachine, !machine.isFinished, let playing = machine.engine.nowPlaying else {
            return
        }
        for node in lan.nodes where node.alive && node.finishedAt == nil {
            guard case .listener(let listener) = node.machine, let tuned = listener.tuned, !tuned.silent,
                listener.clock.isSynchronized, let syncedAt = node.synchronizedAt,
                tuned.snapshot.nowPlaying?.id == playing.id, let learnedAt = Self.learned(playing.id, by: node)
            else { continue }
            let since = max(learnedAt, syncedAt)
            guard lan.now - since > Self.loadWithinNs, node.loads.last?.trackID != playing.id else { continue }
            log.fail(
                "\(node.name) learned at t=\(Double(since - SimRun.start) / 1e9) s that the station plays "
                    + "\(playing.id) and has not loaded it (its last load: \(node.loads.last?.trackID ?? "none"))",
                at: lan.now)
        }
    }

    /// At the end: every load and every early fetch, against the station's history and the cache's.
    func checkLoads(lan: SimLAN, log: inout Log) {
        for node in lan.nodes {
            guard case .listener = node.machine else { continue }
            for load in node.loads {
                if !stationPlayed(load.trackID, from: load.time - Self.loadWithinNs, to: load.time) {
                    log.fail("\(node.name) loaded \(load.trackID), which the station did not play", at: load.time)
                }
                let cache = node.cache.state(of: load.source, at: load.time)
                let asked = node.asked.last { $0.time <= load.time && $0.trackID == load.trackID }?.time
                let fair: Bool =
                    switch load.from {
                    case .cachedFile: if case .ready = cache { true } else { false }
                    case .partialFile: cache == .fetching(startReadable: true)
                    case .url:
                        if case .failed = cache {
                            true
                        } else {
                            // The 12 s are the listener's own: a clock running 200 ppm fast (SimRun's widest
                            // drift) ends them 2.4 ms early in true time.
                            asked.map { load.time - $0 >= Self.cacheWaitNs / 1_000_000 * 999_800 - 1_000_000 } ?? false
                        }
                    }
                if !fair {
                    log.fail(
                        "\(node.name) loaded \(load.trackID) from \(load.from) while the cache had it \(cache)",
                        at: load.time)
                }
            }
            var previous: Int64 = 0
            for report in node.reports {
                let track: Track?
                switch report.event {
                case .tunedIn(let station): track = station.snapshot.nowPlaying
                case .state(let snapshot, _, .track): track = snapshot.nowPlaying
                default: continue
                }
                defer { previous = report.time }
                guard let track else { continue }
                let fetched = node.fetches.contains {
                    $0.url == track.source && $0.now && $0.time <= report.time && $0.time >= previous
                }
                if !fetched {
                    log.fail("\(node.name) told of \(track.id) without asking the cache for it first", at: report.time)
                }
            }
        }
    }
}
