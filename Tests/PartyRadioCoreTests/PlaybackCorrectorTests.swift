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
        var corrector = PlaybackCorrector()
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
        var corrector = PlaybackCorrector()
        let us: Int64 = 1_000
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 150 * us, now: 0).speed == 1)
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 2 * ms, now: 1).speed < 1)
        // Still nudging at 0.1 ms (inside the start band, outside the settled band)…
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 100 * us, now: 2).speed < 1)
        // …and back to exactly 1 under 0.05 ms.
        #expect(corrector.update(stationPositionNs: 0, playerPositionNs: 40 * us, now: 3).speed == 1)
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
