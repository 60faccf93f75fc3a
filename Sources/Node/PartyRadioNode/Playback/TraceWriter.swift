import Foundation
import PartyRadioCore
import PartyRadioLive

/// `--trace FILE`: one JSON object per line, 20 a second, so that synchronisation can be
/// measured against the true clock that all test namespaces share (docs/CLOCK-SYNC.md).
final class TraceWriter {
    private let handle: FileHandle
    private var lastWriteNs: Int64 = 0
    static let intervalNs = Nanos.ms(50)

    init(path: String) throws(NodeError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw NodeError(.storage, "Cannot write the trace file \(path); check the path.") }
        self.handle = handle
    }

    deinit { try? handle.close() }

    /// True when a line is due at local time `now`.
    func isDue(_ now: Int64) -> Bool { now - lastWriteNs >= Self.intervalNs }

    /// The local time the next line is due.
    var nextDueNs: Int64 { lastWriteNs + Self.intervalNs }

    /// Writes one sample. All times refer to the same instant: `trueTimeNs` on the machine's
    /// real clock, `djTimeNs` the node's estimate of the DJ clock then; `live`, a live station's
    /// output as its audio thread last measured it.
    func write(
        role: String, trueTimeNs: Int64, localTimeNs: Int64, djTimeNs: Int64?, view: StationClockView?,
        playerPositionNs: Int64?, latencyNs: Int64, offsetNs: Int64?, driftPPM: Double?, live: LivePlayerCounters? = nil
    ) {
        // Keep the cadence: the node's loop wakes every 20 ms or so, and restarting the interval
        // from each late write would give ~16 lines a second instead of 20.
        lastWriteNs = localTimeNs - lastWriteNs < 2 * Self.intervalNs ? lastWriteNs + Self.intervalNs : localTimeNs
        let track = view?.track
        let station = djTimeNs.flatMap { dj in
            view.map { $0.anchor.position(at: DJTime(ns: dj), durationNs: $0.durationNs) }
        }
        let heard = playerPositionNs.map { $0 - latencyNs }
        let error = heard.flatMap { heard in station.map { heard - $0 } }
        func ms(_ ns: Int64?) -> JSON { ns.map { .double(Double($0) / 1e6) } ?? .null }
        let line =
            JSON.object([
                ("true_time_ns", .integer(trueTimeNs)), ("dj_time_ns", djTimeNs.map(JSON.integer) ?? .null),
                ("local_time_ns", .integer(localTimeNs)), ("role", .string(role)),
                ("track_id", track.map { .string($0.id) } ?? .null), ("paused", .bool(view?.anchor.isPaused ?? true)),
                ("station_position_ms", ms(station)), ("player_position_ms", ms(playerPositionNs)),
                ("sync_error_ms", ms(error)), ("clock_offset_ns", offsetNs.map(JSON.integer) ?? .null),
                ("drift_ppm", driftPPM.map(JSON.double) ?? .null),
                ("live_error_ms", ms(live?.lastErrorNs)), ("live_latency_ms", ms(live?.lastLatencyNs)),
                ("live_ppm", live.map { .double($0.ppm) } ?? .null),
                ("live_placements", live.map { .integer(Int64($0.placements)) } ?? .null),
            ]).rendered + "\n"
        handle.write(Data(line.utf8))
    }
}
