import Testing

@testable import PartyRadioCore

@Suite("PlaybackCorrector")
struct PlaybackCorrectorTests {
    let ms = Nanos.perMillisecond

    @Test("large error seeks, with the output latency added")
    func seeks() {
        var corrector = PlaybackCorrector()
        let decision = corrector.update(
            stationPositionNs: 10_000 * ms, playerPositionNs: 9_900 * ms, outputLatencyNs: 20 * ms, now: 0)
        #expect(decision.seekToNs == 10_020 * ms)
        #expect(decision.speed == 1)
        // While the seek settles, nothing else happens.
        let waiting = corrector.update(stationPositionNs: 10_100 * ms, playerPositionNs: 0, now: 100 * ms)
        #expect(waiting.seekToNs == nil && waiting.errorNs == nil)
    }

    @Test("small error nudges the speed, proportionally and clamped")
    func nudges() {
        var configuration = PlaybackCorrector.Configuration()
        configuration.confirmNs = 0
        var corrector = PlaybackCorrector(configuration: configuration)
        // 10 ms ahead: slow down by 10 ms / 0.5 s = 2 %.
        let ahead = corrector.update(stationPositionNs: 5_000 * ms, playerPositionNs: 5_010 * ms, now: 0)
        #expect(ahead.seekToNs == nil)
        #expect(ahead.speed == 0.98)
        // 39 ms behind: 7.8 % proposed, clamped at +4 %.
        let behind = corrector.update(stationPositionNs: 5_000 * ms, playerPositionNs: 4_961 * ms, now: 1)
        #expect(behind.speed == 1.04)
    }

    @Test("hysteresis: tiny errors leave speed 1, nudging stops within the settled band")
    func hysteresis() {
        var configuration = PlaybackCorrector.Configuration()
        configuration.confirmNs = 0
        var corrector = PlaybackCorrector(configuration: configuration)
        let us: Int64 = 1_000
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 150 * us, now: 0).speed == 1)
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 2 * ms, now: 1).speed < 1)
        // Still nudging at 0.1 ms (inside the start band, outside the settled band)…
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 100 * us, now: 2).speed < 1)
        // …and back to exactly 1 under 0.05 ms.
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 40 * us, now: 3).speed == 1)
    }

    @Test("at speed 1 a nudge waits for an error that holds, and starts from its median")
    func confirmation() {
        var corrector = PlaybackCorrector()
        let us: Int64 = 1_000
        // 1.5 s of readings at 100 ms: 15 of them.
        let needed = Int(corrector.configuration.confirmNs / corrector.configuration.readingIntervalNs)
        #expect(needed == 15)
        var now: Int64 = 0
        func reading(_ error: Int64) -> PlaybackCorrector.Decision {
            now += 100 * ms
            return corrector.update(stationPositionNs: 10_000 * ms, playerPositionNs: 10_000 * ms + error, now: now)
        }
        // 1.3 ms held: nothing for the first 14 readings, then 1.3 ms / 0.5 s slower.
        for _ in 1..<needed { #expect(reading(1_300 * us).speed == 1) }
        #expect(reading(1_300 * us).speed == 0.9974)
        // While nudging, every reading counts (proportional), and under 0.05 ms it stops…
        #expect(reading(600 * us).speed == 0.9988)
        #expect(reading(40 * us).speed == 1)
        // …and the next nudge needs a fresh run: 14 readings at -0.5 ms change nothing.
        for _ in 1..<needed { #expect(reading(-500 * us).speed == 1) }
        #expect(reading(-500 * us).speed == 1.001)
    }

    @Test("a reading off for less than half the window moves nothing; the median ignores it")
    func phantom() {
        var corrector = PlaybackCorrector()
        let us: Int64 = 1_000
        var now: Int64 = 0
        // As seen through PulseAudio: settled at 0.05 ms, then audio-pts 1.1-1.7 ms ahead for
        // 0.6 s, then back, over and over; the speaker never moved.
        for cycle in 0..<20 {
            for index in 0..<20 {
                now += 100 * ms
                let error = index < 6 ? (1_100 + Int64(cycle % 3) * 300) * us : 50 * us
                let decision = corrector.update(
                    stationPositionNs: now, playerPositionNs: now + error, outputLatencyNs: 0, now: now)
                #expect(decision.speed == 1)
                #expect(decision.errorNs == error)
            }
        }
    }

    @Test("weighted median: the middle for equal weights, else where half the weight is reached")
    func median() {
        func median(_ values: [(Int64, Int64)]) -> Int64 {
            PlaybackCorrector.weightedMedian(values.map { (errorNs: $0.0, weight: $0.1) })
        }
        #expect(median([(5, 1)]) == 5)
        #expect(median([(9, 1), (1, 1), (5, 1)]) == 5)
        #expect(median([(4, 1), (1, 1), (9, 1), (7, 1)]) == 4)
        #expect(median([(1, 100), (5, 500), (9, 100)]) == 5)
        #expect(median([(1, 500), (5, 100), (9, 100)]) == 1)
    }

    @Test("a resume lets the player settle without learning a seek lead from it")
    func resume() {
        var corrector = PlaybackCorrector()
        corrector.noteSeek(at: 0, learnLanding: false)
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: -30 * ms, now: 100 * ms).errorNs == nil)
        let settled = corrector.update(stationPositionNs: 0, playerPositionNs: -30 * ms, now: 500 * ms)
        #expect(settled.errorNs == -30 * ms)
        #expect(corrector.seekLeadNs == 0)
        corrector.noteSeek(at: 1_000 * ms)
        _ = corrector.update(stationPositionNs: 0, playerPositionNs: -30 * ms, now: 1_500 * ms)
        #expect(corrector.seekLeadNs == 30 * ms)
    }

    @Test("a simulated player stays within the nudge band and learns the seek lead")
    func simulatedPlayer() {
        // The player restarts 60 ms after a seek and its clock runs 500 ppm fast (a poor sound card).
        var corrector = PlaybackCorrector()
        var player: Int64 = 0
        var speed = 1.0
        var frozenUntil: Int64 = 0
        let station: (Int64) -> Int64 = { $0 + 30_000 * ms }
        var seeks = 0
        var errors: [Int64] = []
        let step = 50 * ms
        var now: Int64 = 0
        while now < 30_000 * ms {
            if now >= frozenUntil { player += Int64(Double(step) * speed * 1.0005) }
            let decision = corrector.update(stationPositionNs: station(now), playerPositionNs: player, now: now)
            if let target = decision.seekToNs {
                player = target
                frozenUntil = now + 60 * ms
                seeks += 1
            }
            speed = decision.speed
            if now > 15_000 * ms, let error = decision.errorNs { errors.append(error) }
            now += step
        }
        #expect(seeks <= 3)
        #expect(corrector.seekLeadNs > 30 * ms)
        #expect(quantile(errors, 1) <= corrector.configuration.nudgeStartNs + ms / 2)
    }

    /// The speaker error of a player whose true position follows the speed exactly but whose
    /// reading is sometimes `phantomNs` ahead for `phantomTicks` ticks of 100 ms (every 10 s).
    func speakerErrors(confirmNs: Int64, phantomNs: Int64, phantomTicks: Int) -> [Int64] {
        var configuration = PlaybackCorrector.Configuration()
        configuration.confirmNs = confirmNs
        var corrector = PlaybackCorrector(configuration: configuration)
        var player: Int64 = 0
        var speed = 1.0
        var errors: [Int64] = []
        let step = 100 * ms
        var now: Int64 = 0
        for tick in 0..<600 {
            player += Int64(Double(step) * speed)
            now += step
            let reading = player + (tick % 100 >= 50 && tick % 100 < 50 + phantomTicks ? phantomNs : 0)
            speed = corrector.update(stationPositionNs: now, playerPositionNs: reading, now: now).speed
            errors.append(player - now)
        }
        return errors
    }

    @Test("a phantom step in the reading leaves the speaker where it was (it moved 1.3 ms without the median)")
    func phantomAtTheSpeaker() {
        let us: Int64 = 1_000
        let unfiltered = speakerErrors(confirmNs: 0, phantomNs: 1_300 * us, phantomTicks: 6)
        #expect(quantile(unfiltered.map { abs($0) }, 1) > 500 * us)
        let filtered = speakerErrors(confirmNs: 1_500 * ms, phantomNs: 1_300 * us, phantomTicks: 6)
        #expect(quantile(filtered.map { abs($0) }, 1) == 0)
        // A real step is still taken back, within a few seconds.
        var corrector = PlaybackCorrector()
        var player: Int64 = 1_300 * us
        var speed = 1.0
        var now: Int64 = 0
        while now < 5_000 * ms {
            player += Int64(Double(100 * ms) * speed)
            now += 100 * ms
            speed = corrector.update(stationPositionNs: now, playerPositionNs: player, now: now).speed
        }
        #expect(abs(player - now) < 100 * us)
    }

    @Test("reads every 100 ms after a start, a nudge or an error past the start band; every 500 ms once settled")
    func readingSchedule() {
        let us: Int64 = 1_000
        var corrector = PlaybackCorrector()
        let fast = corrector.configuration.readingIntervalNs
        let slow = corrector.configuration.settledReadingIntervalNs
        #expect(fast == 100 * ms && slow == 500 * ms)
        corrector.noteSeek(at: 0, learnLanding: false)
        #expect(corrector.readingIntervalNs == fast)
        var now: Int64 = 100 * ms
        func reading(_ error: Int64) -> PlaybackCorrector.Decision {
            now += corrector.readingIntervalNs
            return corrector.update(stationPositionNs: 10_000 * ms, playerPositionNs: 10_000 * ms + error, now: now)
        }
        // Settled readings: fast for the first 1.5 s of them, then slow.
        for _ in 0..<14 {
            _ = reading(30 * us)
            #expect(corrector.readingIntervalNs == fast)
        }
        _ = reading(30 * us)
        #expect(corrector.readingIntervalNs == slow)
        // An error past 0.2 ms: read fast again at once; back within it: slow again.
        _ = reading(400 * us)
        #expect(corrector.readingIntervalNs == fast)
        _ = reading(30 * us)
        #expect(corrector.readingIntervalNs == slow)
        // A held error is confirmed and nudged (fast while nudging), then settles (fast again for 1.5 s).
        var nudged = false
        for _ in 0..<20 where !nudged { nudged = reading(1_000 * us).speed != 1 }
        #expect(nudged)
        #expect(corrector.readingIntervalNs == fast)
        #expect(reading(30 * us).speed == 1)
        #expect(corrector.readingIntervalNs == fast)
        // A seek (or a reset) starts over.
        for _ in 0..<15 { _ = reading(30 * us) }
        #expect(corrector.readingIntervalNs == slow)
        corrector.reset()
        #expect(corrector.readingIntervalNs == fast)
    }

    /// A player whose true position follows the speed exactly, read at the corrector's own schedule
    /// (or every `fixedStepNs`), whose reading is `phantom(t)` off the truth at true time t, with a
    /// real jump of `jumpNs` at `jumpAt`. Returns the speaker error every 10 ms and the instant the
    /// first nudge started.
    func adaptiveRun(
        fixedStepNs: Int64? = nil, seconds: Int64, jumpNs: Int64 = 0, jumpAt: Int64 = .max,
        phantom: (Int64) -> Int64 = { _ in 0 }
    ) -> (errors: [Int64], firstNudge: Int64?) {
        var corrector = PlaybackCorrector()
        var player: Int64 = 0
        var speed = 1.0
        var errors: [Int64] = []
        var firstNudge: Int64?
        var nextReading: Int64 = 0
        var jumped = false
        let step = 10 * ms
        var now: Int64 = 0
        while now < seconds * Nanos.perSecond {
            player += Int64(Double(step) * speed)
            now += step
            if !jumped && now >= jumpAt {
                player += jumpNs
                jumped = true
            }
            if now >= nextReading {
                let reading = player + phantom(now)
                let decision = corrector.update(stationPositionNs: now, playerPositionNs: reading, now: now)
                speed = decision.speed
                if speed != 1 && firstNudge == nil { firstNudge = now }
                nextReading = now + (fixedStepNs ?? corrector.readingIntervalNs)
            }
            errors.append(player - now)
        }
        return (errors, firstNudge)
    }

    @Test("the schedule keeps the confirmation: a phantom still moves nothing, a real step is still taken back")
    func scheduleKeepsTheConfirmation() {
        let us: Int64 = 1_000
        // Through PulseAudio: the reading 1.3 ms ahead for 0.6 s every 2 s (and 0.7 s every 3.1 s).
        for (every, lasting) in [(2_000 * ms, 600 * ms), (3_100 * ms, 700 * ms)] {
            let run = adaptiveRun(seconds: 60) { t in t % every >= every - lasting ? 1_300 * us : 0 }
            #expect(run.firstNudge == nil)
            #expect(run.errors.allSatisfy { $0 == 0 })
        }
        // A real 1 ms step, read on the schedule and every 100 ms: taken back either way, the
        // scheduled one at most the slow interval later.
        let scheduled = adaptiveRun(seconds: 10, jumpNs: 1_000 * us, jumpAt: 5_000 * ms)
        let everyTick = adaptiveRun(fixedStepNs: 100 * ms, seconds: 10, jumpNs: 1_000 * us, jumpAt: 5_000 * ms)
        #expect(abs(scheduled.errors.last!) < 100 * us)
        #expect(abs(everyTick.errors.last!) < 100 * us)
        let delay = scheduled.firstNudge! - 5_000 * ms
        let delayEveryTick = everyTick.firstNudge! - 5_000 * ms
        #expect(delayEveryTick >= 700 * ms && delay >= delayEveryTick && delay <= delayEveryTick + 500 * ms)
    }
}

@Suite("StartPlanner")
struct StartPlannerTests {
    @Test("finds the instant the station reaches the target, for any rate the DJ clock may have")
    func instant() {
        for ppm in [-1000.0, -200, 0, 150, 1000] {
            let station: (Int64) -> Int64 = { local in Int64(Double(local - 1_000) * (1 + ppm / 1e6)) + 5_000_000_000 }
            let at = StartPlanner.instant(reaching: 5_300_000_000, from: 1_000, stationPositionAt: station)
            #expect(abs(station(at) - 5_300_000_000) <= 1)
        }
    }

    @Test("the lead covers twice the last readiness time, within bounds; a first load opens where the station is")
    func lead() {
        #expect(StartPlanner.loadLead(lastReadyNs: nil) == 0)
        #expect(StartPlanner.loadLead(lastReadyNs: 10_000_000) == 150_000_000)
        #expect(StartPlanner.loadLead(lastReadyNs: 200_000_000) == 450_000_000)
        #expect(StartPlanner.loadLead(lastReadyNs: 9_000_000_000) == 3_000_000_000)
        #expect(StartPlanner.seekLead(lastReadyNs: nil) == 60_000_000)
        #expect(StartPlanner.seekLead(lastReadyNs: 5_000_000) == 50_000_000)
        #expect(StartPlanner.seekLead(lastReadyNs: 40_000_000) == 110_000_000)
        #expect(StartPlanner.seekLead(lastReadyNs: 9_000_000_000) == 3_000_000_000)
    }
}
