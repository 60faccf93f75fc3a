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
        configuration.confirmReadings = 1
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
        configuration.confirmReadings = 1
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
        let needed = corrector.configuration.confirmReadings
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

    @Test("median")
    func median() {
        #expect(PlaybackCorrector.median([5]) == 5)
        #expect(PlaybackCorrector.median([9, 1, 5]) == 5)
        #expect(PlaybackCorrector.median([4, 1, 9, 7]) == 4)
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
    func speakerErrors(confirmReadings: Int, phantomNs: Int64, phantomTicks: Int) -> [Int64] {
        var configuration = PlaybackCorrector.Configuration()
        configuration.confirmReadings = confirmReadings
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
        let unfiltered = speakerErrors(confirmReadings: 1, phantomNs: 1_300 * us, phantomTicks: 6)
        #expect(quantile(unfiltered.map { abs($0) }, 1) > 500 * us)
        let filtered = speakerErrors(confirmReadings: 15, phantomNs: 1_300 * us, phantomTicks: 6)
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
