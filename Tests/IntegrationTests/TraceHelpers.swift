import Foundation

/// One line of a node's `--trace` file (docs/CLOCK-SYNC.md).
struct TraceLine {
    /// The machine's real CLOCK_REALTIME, which every namespace shares.
    let trueTimeNs: Int64
    /// The node's estimate of the DJ clock; nil until synchronised. On the DJ, its own clock.
    let djTimeNs: Int64?
    let localTimeNs: Int64
    let role: String
    let trackID: String?
    let paused: Bool
    /// Where the station is, by the node's estimate.
    let stationPositionMs: Double?
    /// Where the node's player is; nil when it does not play.
    let playerPositionMs: Double?
    let syncErrorMs: Double?

    init?(line: String) {
        guard let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let trueTime = (object["true_time_ns"] as? NSNumber)?.int64Value,
            let local = (object["local_time_ns"] as? NSNumber)?.int64Value
        else { return nil }
        trueTimeNs = trueTime
        localTimeNs = local
        djTimeNs = (object["dj_time_ns"] as? NSNumber)?.int64Value
        role = object["role"] as? String ?? ""
        trackID = object["track_id"] as? String
        paused = object["paused"] as? Bool ?? true
        stationPositionMs = (object["station_position_ms"] as? NSNumber)?.doubleValue
        playerPositionMs = (object["player_position_ms"] as? NSNumber)?.doubleValue
        syncErrorMs = (object["sync_error_ms"] as? NSNumber)?.doubleValue
    }

    /// Every complete line of the trace file at `path` so far (a half-written last line is skipped).
    static func read(_ path: String) -> [TraceLine] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { TraceLine(line: String($0)) }
    }
}

/// The truth against which listeners are measured, taken from the DJ's trace: the DJ clock's
/// reading at any true instant, and where the station truly is then.
///
/// The DJ's clock is the machine's clock plus a fixed offset and drift, so true time maps to DJ
/// time linearly: interpolating between two trace lines is exact up to the line's rounding.
struct DJTruth {
    private let lines: [TraceLine]

    init(djTrace: [TraceLine]) {
        lines = djTrace.filter { $0.djTimeNs != nil }.sorted { $0.trueTimeNs < $1.trueTimeNs }
    }

    var isEmpty: Bool { lines.count < 2 }
    var last: TraceLine? { lines.last }

    /// The two DJ lines around `trueNs` (the last two when it lies beyond, the first two before).
    private func bracket(_ trueNs: Int64) -> (TraceLine, TraceLine)? {
        guard lines.count >= 2 else { return nil }
        var low = 0
        var high = lines.count
        while low < high {  // first line at or after trueNs
            let mid = (low + high) / 2
            if lines[mid].trueTimeNs < trueNs { low = mid + 1 } else { high = mid }
        }
        let after = min(max(1, low), lines.count - 1)
        return (lines[after - 1], lines[after])
    }

    /// What the DJ's clock read at true instant `trueNs`.
    func djTimeNs(atTrue trueNs: Int64) -> Double? {
        guard let (a, b) = bracket(trueNs), let djA = a.djTimeNs, let djB = b.djTimeNs, b.trueTimeNs > a.trueTimeNs
        else {
            return nil
        }
        let slope = Double(djB - djA) / Double(b.trueTimeNs - a.trueTimeNs)
        return Double(djA) + slope * Double(trueNs - a.trueTimeNs)
    }

    /// Where the station truly was at `trueNs` while playing `track`: the DJ's station position at
    /// the trace line before, advanced by the DJ-clock time elapsed since (not when paused).
    /// Nil outside the DJ's trace, on another track, and across a discontinuity of the DJ's trace
    /// (a skip, pause, resume or seek between the two lines around `trueNs`), where the truth
    /// cannot be told to the millisecond.
    func stationPositionMs(atTrue trueNs: Int64, track: String?) -> Double? {
        guard let track, let first = lines.first, let last = lines.last,
            trueNs >= first.trueTimeNs, trueNs <= last.trueTimeNs + 60_000_000,
            let (a, b) = bracket(trueNs), let djNow = djTimeNs(atTrue: trueNs)
        else { return nil }
        let before = trueNs >= b.trueTimeNs ? b : a
        guard a.trackID == track, b.trackID == track, a.paused == b.paused,
            let posA = a.stationPositionMs, let posB = b.stationPositionMs, let djA = a.djTimeNs, let djB = b.djTimeNs,
            let position = before.stationPositionMs, let djBefore = before.djTimeNs
        else { return nil }
        let rate = a.paused ? 0.0 : 1.0
        // Continuity: between the two lines the station moved as the clock did, or it jumped.
        guard abs((posB - posA) - rate * Double(djB - djA) / 1e6) < 2 else { return nil }
        return position + rate * (djNow - Double(djBefore)) / 1e6
    }
}

/// A listener's trace line measured against the truth.
struct SyncSample {
    let line: TraceLine
    /// The listener's DJ-clock estimate minus the DJ clock's true reading (nil: not synchronised).
    let logicalErrorMs: Double?
    /// The listener's player position minus the true station position (nil: not playing, or no truth).
    let playerErrorMs: Double?
    /// The true station position then, if known.
    let truthMs: Double?
    var trueTimeNs: Int64 { line.trueTimeNs }
}

extension DJTruth {
    /// Measures every line of a listener's trace.
    func measure(_ trace: [TraceLine]) -> [SyncSample] {
        trace.map { line in
            let logical = line.djTimeNs.flatMap { dj in
                djTimeNs(atTrue: line.trueTimeNs).map { (Double(dj) - $0) / 1e6 }
            }
            let truth = stationPositionMs(atTrue: line.trueTimeNs, track: line.trackID)
            let player = line.playerPositionMs.flatMap { p in truth.map { p - $0 } }
            return SyncSample(line: line, logicalErrorMs: logical, playerErrorMs: player, truthMs: truth)
        }
    }
}

extension Collection where Element == SyncSample {
    /// The samples whose true time lies in `range` (nanoseconds).
    func within(_ range: ClosedRange<Int64>) -> [SyncSample] { filter { range.contains($0.trueTimeNs) } }

    /// The largest absolute logical error; infinite if a sample was not synchronised.
    var worstLogicalMs: Double { map { abs($0.logicalErrorMs ?? .infinity) }.max() ?? .nan }
    /// The largest absolute player error among the samples that have one.
    var worstPlayerMs: Double { compactMap { $0.playerErrorMs.map(abs) }.max() ?? .nan }
    /// How many samples have a player error.
    var playerCount: Int { count(where: { $0.playerErrorMs != nil }) }

    /// A few lines on the samples, for failure messages.
    var summary: String {
        let logical = compactMap(\.logicalErrorMs).map(abs).sorted()
        let player = compactMap(\.playerErrorMs).map(abs).sorted()
        func describe(_ values: [Double]) -> String {
            guard let max = values.last else { return "none" }
            return String(format: "n=%d p50=%.3f max=%.3f ms", values.count, values[values.count / 2], max)
        }
        return "logical \(describe(logical)); player \(describe(player)); \(count) lines"
    }

    /// The signed player errors, one in `every` lines, as "seconds-since-first:error-ms", for failure messages.
    func playerErrors(every: Int = 5) -> String {
        guard let start = first?.trueTimeNs else { return "" }
        return enumerated().filter { $0.offset % every == 0 }.map { _, sample in
            String(format: "%.2f:", Double(sample.trueTimeNs - start) / 1e9)
                + (sample.playerErrorMs.map { String(format: "%.1f", $0) } ?? "-")
        }.joined(separator: " ")
    }
}

extension Testbed {
    /// Where a node of this testbed writes its `--trace`.
    func tracePath(_ role: String) -> String { "/tmp/partyradio-it-\(name)/\(role).trace.jsonl" }

    /// The trace of the node `role` so far, measured against the trace of the node `dj`.
    func measureListener(_ role: String, dj: String = "dj") -> [SyncSample] {
        DJTruth(djTrace: TraceLine.read(tracePath(dj))).measure(TraceLine.read(tracePath(role)))
    }
}

/// Sleeps until the machine's real clock reads `trueNs`.
func sleep(untilTrue trueNs: Int64) {
    let remaining = trueNs - realTimeNs()
    if remaining > 0 { Thread.sleep(forTimeInterval: Double(remaining) / 1e9) }
}
