/// Feeds a live output (docs/LIVE.md, "The listener's output"): each turn it says how much to write
/// so that the output is fed back to back and holds a steady amount, where the first frame goes
/// (placement), and when the output must be placed again; and it measures, after each write, how
/// far the output is from the station's timeline, for the drift controller it owns.
///
/// Pure: the caller reads the station time and the output's reported latency (what it holds: a
/// sample written now is heard at `now + latency`), asks ``step(now:latencyNs:next:)`` and does
/// what it answers. Amounts are in samples per channel at ``Settings/rate``.
///
/// **Why a write's timing does not matter.** An output fed back to back plays each sample after
/// all the samples written before it: where a frame is heard is set by how many samples went
/// before it since the output was placed, which resampling changes, and not by when it is written.
/// So the pacer writes whenever the output holds less than ``Settings/targetNs``, and measures
/// `now + latency − due` right after a write, when the latency reading includes what was written.
/// A turn that waits only lets the output drain; while it plays, `now + latency` stays put.
public struct LivePacer: Sendable {
    public struct Settings: Sendable, Equatable {
        /// What the output holds once topped up (its reported latency): less runs dry sooner on a
        /// loaded machine, more comes out of the station's delay.
        public var targetNs: Int64
        /// The least written in one turn: the output is topped up once it lacks this much.
        public var minimumWriteNs: Int64
        /// An error beyond what resampling takes away soon (1 ms takes a second at the
        /// controller's most), read twice in a row: the output is placed again instead. An output
        /// that ran dry shows up as a jump of the error by the time it lost; one reading alone may
        /// be libpulse's interpolation moved by a timing report.
        public var replaceBeyondNs: Int64
        /// How much two readings of the output's latency may disagree (libpulse interpolates between
        /// the server's timing reports): a frame that reads this much past its time while placing is
        /// still placed, its samples that were due before the output can play them left out, rather
        /// than skipped.
        public var jitterNs: Int64
        /// Samples per channel in a second.
        public var rate: Int
        public var drift: LiveDriftController.Settings
        /// The most the target grows to after the output ran dry (a machine that starves the audio
        /// thread): each time it ran dry the target grows by ``growByNs``, so that a loaded machine
        /// keeps more in the output rather than running dry again and again. Never below
        /// ``targetNs`` (equal: it does not grow).
        public var maximumTargetNs: Int64
        public var growByNs: Int64

        public init(
            targetNs: Int64 = 20_000_000, minimumWriteNs: Int64 = 2_500_000, replaceBeyondNs: Int64 = 8_000_000,
            jitterNs: Int64 = 2_000_000, rate: Int = 48_000, drift: LiveDriftController.Settings = .init(),
            maximumTargetNs: Int64? = nil, growByNs: Int64 = 5_000_000
        ) {
            self.targetNs = targetNs
            self.maximumTargetNs = max(maximumTargetNs ?? targetNs, targetNs)
            self.growByNs = growByNs
            self.minimumWriteNs = minimumWriteNs
            self.replaceBeyondNs = replaceBeyondNs
            self.jitterNs = jitterNs
            self.rate = rate
            self.drift = drift
        }
    }

    /// What the caller does this turn.
    public enum Step: Equatable, Sendable {
        /// The output holds enough: ask again after this long.
        case wait(ns: Int64)
        /// Write this many samples of silence (placing, or keeping an output with nothing to play running).
        case silence(samples: Int)
        /// Write the next this many samples of the frame taken last.
        case write(samples: Int)
        /// Take the next frame from the buffer, decode and resample it by ``ratio``, and hand it to
        /// ``took(due:durationNs:samples:)``.
        case take
        /// Take the next frame from the buffer and drop it: its time passed before it could be placed.
        case skip
        /// Leave out the next this many samples of the frame taken last, unwritten: its first ones
        /// were due a little before the output could play them (placing).
        case drop(samples: Int)
    }

    /// What the pacer did so far.
    public struct Counters: Sendable, Equatable {
        /// Times the output was placed on the station's timeline: the first frame, and again after
        /// an error too large to take away by resampling, a gap in the frames, or nothing to play.
        public var placements = 0
        /// Frames dropped because their time passed while placing.
        public var skipped = 0
        /// Samples taken and never written: the rest of a frame when the output was placed again.
        public var dropped = 0
        /// Times the target was raised because the output's latency stayed above it without draining
        /// (a sink whose own latency is larger than the target).
        public var raised = 0
        /// Times the target grew because the output ran dry (``Settings/maximumTargetNs``).
        public var grown = 0
        /// The last error measured after a write, in ns; positive: late.
        public var lastErrorNs: Int64 = 0

        public init() {}
    }

    /// The frame taken and not all written.
    private struct Pending: Sendable {
        var due: DJTime
        var durationNs: Int64
        var samples: Int
        var written = 0
        /// The station time of the first sample not written.
        var cursor: DJTime { due + durationNs * Int64(written) / Int64(max(samples, 1)) }
        var remaining: Int { samples - written }
    }

    /// The previous turn's reading, to tell an output that drains from one that does not.
    private struct Reading: Sendable {
        var now: DJTime
        var latencyNs: Int64
    }

    public let settings: Settings
    public private(set) var counters = Counters()
    /// What the output holds once topped up: ``Settings/targetNs``, or more for an output that does not drain below it.
    public private(set) var targetNs: Int64
    private var controller: LiveDriftController
    /// The station time the next sample written is due at; nil while not placed.
    private var end: DJTime?
    private var pending: Pending?
    private var wroteLastTurn = false
    /// Readings in a row whose error is beyond ``Settings/replaceBeyondNs``.
    private var readingsBeyond = 0
    private var waited: Reading?

    public init(settings: Settings = Settings()) {
        self.settings = settings
        targetNs = settings.targetNs
        controller = LiveDriftController(settings: settings.drift)
    }

    /// Output samples per input sample, for the frame taken next.
    public var ratio: Double { controller.ratio }
    /// The ratio's departure from 1, in ppm.
    public var ppm: Double { controller.ppm }
    /// The drift the controller learnt, in ppm (``LiveDriftController/learntPPM``).
    public var learntPPM: Double { controller.learntPPM }
    /// Whether the output is on the station's timeline.
    public var isPlaced: Bool { end != nil }

    /// The next thing to do.
    /// - Parameters:
    ///   - now: the station time.
    ///   - latencyNs: the output's latency read just now (with the resampler's delay): a sample
    ///     written now is heard at `now + latencyNs`.
    ///   - next: when the next frame in the buffer is due at the output (its first decoded sample's
    ///     station time); nil when the buffer has none.
    public mutating func step(now: DJTime, latencyNs: Int64, next: DJTime?) -> Step {
        let horizon = now + latencyNs
        let wrote = wroteLastTurn
        wroteLastTurn = false
        raiseIfNotDraining(now: now, latencyNs: latencyNs)
        if let end {
            let error = horizon - end
            if abs(error) > settings.replaceBeyondNs {
                // Once may be the reading (a timing report that moved the interpolation): read again
                // soon. Twice in a row is the output.
                readingsBeyond += 1
                if readingsBeyond < 2 { return .wait(ns: settings.minimumWriteNs / 5) }
                // Late: the output ran dry (the thread was starved). Keep more in it from now on.
                if error > 0 && targetNs < settings.maximumTargetNs {
                    targetNs = min(targetNs + settings.growByNs, settings.maximumTargetNs)
                    counters.grown += 1
                }
                unplace()
            } else {
                readingsBeyond = 0
                if wrote {
                    controller.update(errorNs: error, at: now.ns)
                    counters.lastErrorNs = error
                }
            }
        }
        let room = targetNs - latencyNs
        if let end {
            if room < settings.minimumWriteNs { return wait(room: room, now: now, latencyNs: latencyNs) }
            if let pending {
                return write(min(pending.remaining, samples(room)))
            }
            // The next frame continues the timeline; one that does not (a gap in the frames, nothing
            // to play) is placed on its own.
            if let next, abs(next - end) <= settings.replaceBeyondNs { return .take }
            unplace()
        }
        // Placing: silence up to the next frame's time, then the frame.
        if let pending {
            let gap = pending.due - horizon
            // A frame taken as its time came may read as just past it: the latency jitters.
            if gap < -settings.jitterNs {
                self.pending = nil
                counters.skipped += 1
                return step(now: now, latencyNs: latencyNs, next: next)
            }
            if gap < 0 {
                // Due a little before the output can play it: its first samples are left out, so
                // that the rest is heard on time (played whole, it would be heard up to the jitter
                // late, for the drift correction to take away over seconds).
                let late = min(samples(-gap), pending.samples - pending.written - 1)
                if late > 0 {
                    self.pending?.written += late
                    counters.dropped += late
                    end = self.pending?.cursor
                    counters.placements += 1
                    controller.restart()
                    return .drop(samples: late)
                }
            }
            if gap <= max(room, 0) {
                end = pending.due
                counters.placements += 1
                controller.restart()
                let silence = samples(gap)
                if silence > 0 {
                    wroteLastTurn = true
                    return .silence(samples: silence)
                }
                return step(now: now, latencyNs: latencyNs, next: next)
            }
        } else if let next {
            let gap = next - horizon
            if gap < -settings.jitterNs {
                counters.skipped += 1
                return .skip
            }
            if gap <= max(room, 0) { return .take }
        }
        if room < settings.minimumWriteNs { return wait(room: room, now: now, latencyNs: latencyNs) }
        wroteLastTurn = true
        return .silence(samples: samples(room))
    }

    /// The frame asked for by ``Step/take``.
    /// - Parameters:
    ///   - due: the station time its first decoded sample is due at the output.
    ///   - durationNs: its length in station time.
    ///   - samples: how many samples it came to after resampling.
    public mutating func took(due: DJTime, durationNs: Int64, samples: Int) {
        pending = Pending(due: due, durationNs: durationNs, samples: samples)
        // A frame that does not continue the timeline (an earlier one arrived late, before it).
        if let end, abs(due - end) > settings.replaceBeyondNs { unplace() }
        if samples == 0 { pending = nil }
    }

    // MARK: Inside

    private func samples(_ ns: Int64) -> Int { Int(max(ns, 0) * Int64(settings.rate) / 1_000_000_000) }

    private mutating func write(_ count: Int) -> Step {
        guard var pending, count > 0 else { return .wait(ns: settings.minimumWriteNs) }
        pending.written += count
        end = pending.cursor
        self.pending = pending.remaining > 0 ? pending : nil
        wroteLastTurn = true
        return .write(samples: count)
    }

    private mutating func wait(room: Int64, now: DJTime, latencyNs: Int64) -> Step {
        if waited == nil { waited = Reading(now: now, latencyNs: latencyNs) }
        return .wait(ns: min(settings.minimumWriteNs - room, settings.targetNs / 2))
    }

    /// Off the timeline: what is left of the frame taken is dropped, and the next frame is placed.
    private mutating func unplace() {
        readingsBeyond = 0
        if let pending { counters.dropped += pending.remaining }
        pending = nil
        end = nil
    }

    /// An output drains as time passes; one whose latency stays above the target for longer than two
    /// writes' worth of time while nothing is written (a sink whose own latency is larger, a stream
    /// that waits for more before it plays) would never be written again: the target goes up to that
    /// latency and half the target's own more.
    private mutating func raiseIfNotDraining(now: DJTime, latencyNs: Int64) {
        guard let since = waited else { return }
        let elapsed = now - since.now
        let drained = since.latencyNs - latencyNs
        if targetNs - latencyNs >= settings.minimumWriteNs || drained >= elapsed / 2 {
            waited = nil
        } else if elapsed >= 2 * settings.minimumWriteNs {
            targetNs = latencyNs + settings.targetNs / 2
            counters.raised += 1
            waited = nil
        }
    }
}
