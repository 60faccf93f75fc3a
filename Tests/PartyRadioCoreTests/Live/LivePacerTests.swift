import PartyRadioCore
import Testing

/// The pacer against a model of an output, run by a model of the audio thread that does what each
/// step says. The checks restate the rules on what the model heard, never on what the pacer says:
///
/// - a sample written into a playing output is heard after all the samples written before it:
///   `now + the sink's own latency + what the stream holds / the sink's rate`, where the sink's
///   clock runs `driftPPM` fast against the station clock; what the output reports as its latency is
///   that at the nominal rate, plus up to `noiseNs` of jitter (libpulse interpolates between the
///   server's timing reports);
/// - a frame is on time when its first sample is heard at its due time;
/// - every sample taken from a frame is written once, in order, unless the output was placed again;
/// - the output is placed when a frame follows silence, or a frame that was not written out.
@Suite struct LivePacerTests {
    /// The output: a stream drained by a sink whose clock drifts.
    struct Sink {
        var ownLatencyNs: Double
        var driftPPM: Double
        var noiseNs: Double
        let rate = 48_000.0
        var held = 0.0
        var lastNs: Int64 = 0
        var playing = false
        /// Times a playing output ran out of samples.
        var dry = 0

        mutating func advance(to now: Int64) {
            defer { lastNs = now }
            guard playing else { return }
            let played = Double(now - lastNs) / 1e9 * rate * (1 + driftPPM / 1e6)
            if played >= held {
                held = 0
                playing = false
                dry += 1
            } else {
                held -= played
            }
        }

        /// When a sample written now is heard.
        func heard(at now: Int64) -> Double { Double(now) + ownLatencyNs + held / (rate * (1 + driftPPM / 1e6)) * 1e9 }

        func reportedNs(using random: inout SplitMix64) -> Int64 {
            let noise = noiseNs == 0 ? 0 : Double.random(in: -noiseNs...noiseNs, using: &random)
            return Int64(ownLatencyNs + held / rate * 1e9 + noise)
        }

        mutating func write(_ samples: Int) {
            held += Double(samples)
            playing = true
        }
    }

    struct Scenario {
        var driftPPM = 0.0
        var noiseNs = 0.0
        var sinkLatencyNs = 5_000_000.0
        var seconds = 40.0
        var seed: UInt64 = 1
        /// The most a wait oversleeps (a loaded machine).
        var oversleepNs: Int64 = 1_000_000
        /// Station time of the first frame's due; frames are 10 ms long and there from `arrival`
        /// before their time on.
        var firstDueNs: Int64 = 137_000_000
        var aheadNs: Int64 = 50_000_000
        /// The thread stops this long at this time (a stalled machine), once.
        var stall: (atNs: Int64, forNs: Int64)?
        /// Frames stop coming after this many (the station stopped), and come again this much later.
        var pause: (after: Int, forNs: Int64)?
        /// One latency reading at each of these times is off by this much (a timing report moving
        /// libpulse's interpolation).
        var spikes: [(atNs: Int64, byNs: Int64)] = []
        var settings = LivePacer.Settings()
    }

    struct Run {
        /// Each frame whose first sample was written: when it was heard minus its due, and when.
        var errors: [(atNs: Int64, errorNs: Double)] = []
        var ppms: [(atNs: Int64, ppm: Double)] = []
        var taken = 0
        var written = 0
        /// Samples of a frame's head left out while placing it.
        var dropped = 0
        var takenFrames: [Int] = []
        var startedFrames: [Int] = []
        /// Frames whose first sample followed silence or a frame not written out.
        var placements = 0
        var dry = 0

        func errors(after ns: Int64) -> [Double] { errors.filter { $0.atNs >= ns }.map(\.errorNs) }
        func ppms(after ns: Int64) -> [Double] { ppms.filter { $0.atNs >= ns }.map(\.ppm) }
    }

    static func simulate(_ scenario: Scenario) -> (run: Run, pacer: LivePacer) {
        var random = SplitMix64(seed: scenario.seed)
        var sink = Sink(
            ownLatencyNs: scenario.sinkLatencyNs, driftPPM: scenario.driftPPM, noiseNs: scenario.noiseNs)
        var pacer = LivePacer(settings: scenario.settings)
        var run = Run()
        var now: Int64 = 0
        var nextFrame = 0
        var stalled = false
        var spikes = scenario.spikes
        // The frame taken: its index, its length after resampling, and how much of it was written.
        var pending: (frame: Int, samples: Int, written: Int, dropped: Int)?
        var carry = 0.0
        var afterSilence = true
        var afterCut = false
        let frameNs: Int64 = 10_000_000
        func due(_ frame: Int) -> Int64 {
            var due = scenario.firstDueNs + Int64(frame) * frameNs
            if let pause = scenario.pause, frame >= pause.after { due += pause.forNs }
            return due
        }
        while Double(now) < scenario.seconds * 1e9 {
            sink.advance(to: now)
            let arrived = now >= due(nextFrame) - scenario.aheadNs
            var spike: Int64 = 0
            if let first = spikes.first, now >= first.atNs {
                spike = first.byNs
                spikes.removeFirst()
            }
            let step = pacer.step(
                now: DJTime(ns: now), latencyNs: sink.reportedNs(using: &random) + spike,
                next: arrived ? DJTime(ns: due(nextFrame)) : nil)
            switch step {
            case .wait(let ns):
                #expect(ns > 0)
                now += ns + Int64.random(in: 0...scenario.oversleepNs, using: &random)
            case .silence(let samples):
                sink.write(samples)
                afterSilence = true
            case .write(let samples):
                guard var taken = pending else {
                    Issue.record("a write with nothing taken")
                    return (run, pacer)
                }
                if taken.written == taken.dropped {
                    // The first sample written: due when the frame's samples left out would have played.
                    let dueNs =
                        Double(due(taken.frame)) + Double(taken.dropped) / Double(taken.samples) * Double(frameNs)
                    let error = sink.heard(at: now) - dueNs
                    run.errors.append((now, error))
                    run.startedFrames.append(taken.frame)
                    if afterSilence || afterCut { run.placements += 1 }
                    afterSilence = false
                    afterCut = false
                }
                #expect(samples > 0 && taken.written + samples <= taken.samples)
                #expect(taken.dropped == 0 || run.placements > 0, "samples left out of a frame not placed")
                sink.write(samples)
                taken.written += samples
                run.written += samples
                pending = taken
            case .drop(let samples):
                // Only the head of a frame taken, before any of it was written (placing it).
                guard var taken = pending, taken.written == 0, samples > 0, samples < taken.samples else {
                    Issue.record("a drop of \(samples) samples that is not a placed frame's head")
                    return (run, pacer)
                }
                taken.written = samples
                taken.dropped = samples
                run.dropped += samples
                pending = taken
            case .take:
                if let taken = pending, taken.written < taken.samples { afterCut = true }
                // The resampler: every input sample used once, the fraction carried.
                let exact = carry + 480 * pacer.ratio
                let samples = Int(exact)
                carry = exact - Double(samples)
                pending = (nextFrame, samples, 0, 0)
                run.taken += samples
                run.takenFrames.append(nextFrame)
                pacer.took(due: DJTime(ns: due(nextFrame)), durationNs: frameNs, samples: samples)
                nextFrame += 1
            case .skip:
                nextFrame += 1
            }
            now += 20_000  // a turn's own time
            if let stall = scenario.stall, !stalled, now >= stall.atNs {
                stalled = true
                now += stall.forNs
            }
            run.ppms.append((now, pacer.ppm))
        }
        run.dry = sink.dry
        return (run, pacer)
    }

    /// Frames 0, 1, 2, … with none left out and none twice.
    static func inOrder(_ frames: [Int]) -> Bool { frames.enumerated().allSatisfy { $0.offset == $0.element } }

    /// The error converges to zero whatever the drift, measurements jitter or not: each frame is
    /// heard within 0.3 ms of its time after 30 s, and the ratio settles at the sink's drift.
    @Test(arguments: [-200.0, -50, 0, 50, 200])
    func theErrorGoesToZeroAndTheRatioToTheDrift(drift: Double) {
        for noise in [0.0, 1_000_000] {
            let (run, _) = Self.simulate(Scenario(driftPPM: drift, noiseNs: noise))
            let tail = run.errors(after: 30_000_000_000)
            #expect(tail.count > 900)
            let worst = tail.map(abs).max() ?? .infinity
            #expect(worst < 300_000, "drift \(drift) ppm, noise \(noise / 1e6) ms: \(worst / 1000) µs off at the end")
            // A sink `drift` ppm fast plays that much more: the output is stretched by as much.
            let ppms = run.ppms(after: 30_000_000_000)
            let mean = ppms.reduce(0, +) / Double(max(ppms.count, 1))
            #expect(abs(mean - drift) < 20, "drift \(drift) ppm, noise \(noise / 1e6) ms: ratio at \(mean) ppm")
        }
    }

    /// The ratio never sits at its limit: a sink's drift is ±200 ppm, the limit 1000. With 1 ms of
    /// jitter on every reading it wanders up to about 400 ppm around the drift (590 at most here).
    @Test(arguments: [-200.0, 0, 200])
    func theRatioDoesNotPin(drift: Double) {
        let (run, _) = Self.simulate(Scenario(driftPPM: drift, noiseNs: 1_000_000, seconds: 20))
        let worst = run.ppms.map { abs($0.ppm) }.max() ?? 0
        #expect(worst < 700, "drift \(drift) ppm: the ratio reached \(worst) ppm")
    }

    /// Every sample taken is written once, in order; the frames follow each other with no gap and
    /// no repeat; the output never runs dry; it is placed once.
    @Test func noSampleIsDroppedOrRepeated() {
        let (run, _) = Self.simulate(Scenario(driftPPM: 150, noiseNs: 1_000_000, seconds: 20))
        // What is still in the last frame taken is the only difference.
        #expect(run.taken - run.written >= 0 && run.taken - run.written <= 481, "\(run.taken) in, \(run.written) out")
        #expect(Self.inOrder(run.takenFrames) && Self.inOrder(run.startedFrames))
        #expect(run.placements == 1)
        #expect(run.dry == 0)
    }

    /// The first frame is placed by silence up to its time: it is heard at its due time, to within
    /// the latency's jitter and a sample.
    @Test func theFirstFrameIsPlacedOnTime() {
        for first in [Int64(81_000_000), 137_000_000, 400_000_000] {
            let (run, _) = Self.simulate(Scenario(seconds: 1, firstDueNs: first))
            let error = run.errors.first?.errorNs ?? .infinity
            #expect(abs(error) < 21_000, "first due at \(first / 1_000_000) ms: heard \(error / 1000) µs off")
        }
    }

    /// A frame the output can play only 1 ms after its time (a restarted speaker tuning in, an output
    /// placed again) is placed with that 1 ms of its head left out, so the rest is heard on time: a
    /// sample written next is heard where the timeline says, not a millisecond late.
    @Test func aFrameJustPastItsTimeLosesItsHeadNotItsPlace() {
        var pacer = LivePacer()
        let now = DJTime(ns: 1_000_000_000)
        let latency: Int64 = 5_000_000
        let due = now + latency - 1_000_000
        #expect(pacer.step(now: now, latencyNs: latency, next: due) == .take)
        pacer.took(due: due, durationNs: 10_000_000, samples: 480)
        // 1 ms at 48 kHz.
        #expect(pacer.step(now: now, latencyNs: latency, next: nil) == .drop(samples: 48))
        #expect(pacer.step(now: now, latencyNs: latency, next: nil) == .write(samples: 432))
        // The 432 written: heard from `now + latency`, they end where the frame ends.
        _ = pacer.step(now: now, latencyNs: latency + 9_000_000, next: due + 10_000_000)
        #expect(pacer.counters.lastErrorNs == 0 && pacer.counters.placements == 1, "\(pacer.counters)")
        #expect(pacer.counters.dropped == 48 && pacer.counters.skipped == 0, "\(pacer.counters)")
    }

    /// An output that ran dry (the thread stalled for longer than the output holds) is placed again
    /// at once: no frame is heard off its time by more than the latency's jitter, the frames whose
    /// time passed are skipped, and it plays on, placed twice.
    @Test func aDrainedOutputIsPlacedAgainAtOnce() {
        for stall in [Int64(30_000_000), 45_000_000, 200_000_000] {
            let scenario = Scenario(noiseNs: 500_000, seconds: 8, stall: (3_000_000_000, stall))
            let (run, _) = Self.simulate(scenario)
            #expect(run.dry == 1, "stall \(stall / 1_000_000) ms")
            #expect(run.placements == 2, "stall \(stall / 1_000_000) ms")
            let worst = run.errors.map { abs($0.errorNs) }.max() ?? .infinity
            #expect(worst < 600_000, "stall \(stall / 1_000_000) ms: a frame \(worst / 1000) µs off")
            // The frames after the stall are the ones whose time had not passed: a jump, then in order.
            let started = run.startedFrames
            let jumps = zip(started, started.dropFirst()).filter { $1 != $0 + 1 }
            #expect(jumps.count == 1, "stall \(stall / 1_000_000) ms: \(jumps)")
        }
    }

    /// An output that ran dry (the thread starved) keeps more in it from then on: the target grows by
    /// 5 ms each time, never beyond its maximum; with no maximum above the target it stays.
    @Test func aStarvedOutputKeepsMoreInIt() {
        var settings = LivePacer.Settings(targetNs: 20_000_000, maximumTargetNs: 30_000_000)
        let scenario = Scenario(noiseNs: 500_000, seconds: 8, stall: (3_000_000_000, 45_000_000), settings: settings)
        let (run, pacer) = Self.simulate(scenario)
        #expect(run.dry == 1 && run.placements == 2)
        #expect(pacer.targetNs == 25_000_000 && pacer.counters.grown == 1, "target \(pacer.targetNs)")
        // Still on time after it, and what the output holds is the new target (25 ms, not 20).
        let worst = run.errors.map { abs($0.errorNs) }.max() ?? .infinity
        #expect(worst < 600_000, "a frame \(worst / 1000) µs off")
        settings.maximumTargetNs = 20_000_000
        let (_, fixed) = Self.simulate(
            Scenario(noiseNs: 500_000, seconds: 8, stall: (3_000_000_000, 45_000_000), settings: settings))
        #expect(fixed.targetNs == 20_000_000 && fixed.counters.grown == 0)
        // Never beyond the maximum, however often it runs dry.
        var capped = LivePacer.Settings(targetNs: 20_000_000, maximumTargetNs: 27_000_000)
        capped.growByNs = 5_000_000
        var many = Scenario(noiseNs: 500_000, seconds: 8, settings: capped)
        many.stall = (2_000_000_000, 60_000_000)
        let (_, once) = Self.simulate(many)
        #expect(once.targetNs <= 27_000_000)
    }

    /// One reading far off (libpulse's interpolation moved by a timing report) is not an output off
    /// its time: nothing is placed again, nothing skipped, every frame on time.
    @Test func oneReadingFarOffPlacesNothingAgain() {
        let spikes: [(atNs: Int64, byNs: Int64)] = [(2_000_000_000, 12_000_000), (3_000_000_000, -12_000_000)]
        let (run, _) = Self.simulate(Scenario(noiseNs: 500_000, seconds: 5, spikes: spikes))
        #expect(run.placements == 1 && run.dry == 0)
        #expect(Self.inOrder(run.startedFrames))
        let worst = run.errors.map { abs($0.errorNs) }.max() ?? .infinity
        #expect(worst < 600_000, "a frame \(worst / 1000) µs off")
    }

    /// The station stops and starts again 300 ms later: the output keeps running on silence and
    /// places the next frame on time.
    @Test func framesAfterAPauseArePlacedOnTime() {
        let (run, _) = Self.simulate(Scenario(noiseNs: 500_000, seconds: 3, pause: (100, 300_000_000)))
        #expect(run.placements == 2)
        let worst = run.errors.map { abs($0.errorNs) }.max() ?? .infinity
        #expect(worst < 600_000, "a frame \(worst / 1000) µs off")
    }

    /// A sink whose own latency is above the target never drains below it: frames still play, on time.
    @Test func aSinkWithALargerLatencyStillPlays() {
        let (run, _) = Self.simulate(Scenario(noiseNs: 500_000, sinkLatencyNs: 40_000_000, seconds: 10))
        #expect(run.startedFrames.count > 900)
        let worst = run.errors.map { abs($0.errorNs) }.max() ?? .infinity
        #expect(worst < 600_000, "a frame \(worst / 1000) µs off")
        #expect(run.dry == 0)
    }

    /// Whatever the drift, jitter, sink latency and oversleep, within the bounds of a real output:
    /// the same rules hold.
    @Test func propertiesHoldForRandomOutputs() {
        var random = SplitMix64(seed: 28)
        for seed in 1...20 as ClosedRange<UInt64> {
            var scenario = Scenario(seconds: 30, seed: seed)
            scenario.driftPPM = Double.random(in: -200...200, using: &random)
            scenario.noiseNs = Double.random(in: 0...1_000_000, using: &random)
            scenario.sinkLatencyNs = Double.random(in: 1_000_000...10_000_000, using: &random)
            scenario.oversleepNs = Int64.random(in: 0...3_000_000, using: &random)
            scenario.firstDueNs = Int64.random(in: 60_000_000...200_000_000, using: &random)
            let (run, _) = Self.simulate(scenario)
            let label = "seed \(seed): \(scenario.driftPPM) ppm, noise \(scenario.noiseNs / 1e6) ms"
            #expect(run.placements == 1 && run.dry == 0, "\(label)")
            #expect(run.taken - run.written >= 0 && run.taken - run.written <= 481, "\(label)")
            #expect(Self.inOrder(run.startedFrames), "\(label): frames \(run.startedFrames.prefix(5))…")
            let tail = run.errors(after: 20_000_000_000).map(abs).max() ?? .infinity
            #expect(tail < 500_000, "\(label): \(tail / 1000) µs off at the end")
            let worst = run.ppms.map { abs($0.ppm) }.max() ?? 0
            #expect(worst < 600, "\(label): the ratio reached \(worst) ppm")
        }
    }
}
