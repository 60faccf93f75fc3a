import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// `partyradio doctor`'s clock check as a machine: it finds a station, pings it and measures, and
/// says so when there is none, or when one is announced and does not answer.
@Suite struct ClockProbeMachineTests {
    func started() -> ClockProbeMachine {
        var probe = ClockProbeMachine(verifier: ChecksumVerifier())
        #expect(probe.nextWakeup == nil)
        #expect(probe.handle(.start, at: t0).browses == 1)
        return probe
    }

    /// The station heard from: the probe picks it and sends its first ping.
    func tuned(_ probe: inout ClockProbeMachine, station: inout Peer) -> [Effect] {
        _ = probe.handle(Fixture.resolved(), at: at(ms: 20))
        return probe.handle(
            station.send(.stateSnapshot(Fixture.snapshot(dj: DJTime(ns: 1))), station: Fixture.stationID),
            at: at(ms: 30))
    }

    @Test func measuresTheOffsetAndRoundTripFromEightPongs() throws {
        var probe = started()
        var station = Fixture.djPeer
        let first = tuned(&probe, station: &station)
        #expect(first.messages.map(\.tag) == ["timePing"])
        #expect(first.sent.first?.to == .peer(Fixture.djAddress))
        // The station's clock is 1.5 s ahead; 100 µs out, 100 µs back, held 20 µs.
        let offset = Nanos.ms(1500)
        var now = at(ms: 30)
        var pings = 1
        while !probe.isFinished {
            let t1 = now.ns
            let pong = TimePong(
                clientSendNs: t1, serverReceiveNs: t1 + offset + 100_000, serverSendNs: t1 + offset + 120_000)
            now = now + 220_000
            _ = probe.handle(station.send(.timePong(pong), station: Fixture.stationID), at: now)
            guard !probe.isFinished, let wake = probe.nextWakeup else { break }
            #expect(wake > now)
            now = wake
            pings += probe.handle(.timer, at: now).messages.filter { $0.tag == "timePing" }.count
        }
        guard case .measured(let found, let reading) = probe.outcome else {
            Issue.record("no measurement: \(String(describing: probe.outcome))")
            return
        }
        #expect(found == ClockProbeMachine.Station(name: "Rooftop", address: Fixture.djAddress))
        #expect(abs(reading.offsetNs - offset) < 1_000)
        #expect(reading.minRoundTripNs == 200_000 && reading.medianRoundTripNs == 200_000)
        #expect(reading.received == 8 && reading.sent == pings)
    }

    @Test func noStationOnceTheSweepIsDone() {
        var probe = started()
        _ = probe.handle(.discovery(.allForNow), at: at(ms: 900))
        #expect(probe.outcome == .noStation)
    }

    @Test func noStationAtTheDeadline() {
        var probe = started()
        _ = probe.run(until: at(ms: 3000), from: t0)
        #expect(probe.outcome == .noStation)
    }

    @Test func anAnnouncedStationThatNeverAnswersIsSilent() {
        var probe = started()
        _ = probe.handle(Fixture.resolved(), at: at(ms: 20))
        let effects = probe.run(until: at(ms: 3000), from: at(ms: 20))
        #expect(effects.messages.allSatisfy { $0.tag == "query" } && effects.messages.count >= 3)
        #expect(probe.outcome == .silent(ClockProbeMachine.Station(name: "Rooftop", address: Fixture.djAddress)))
    }

    @Test func aStationThatAnswersQueriesButNoPingsHasNoPong() {
        var probe = started()
        var station = Fixture.djPeer
        _ = tuned(&probe, station: &station)
        let effects = probe.run(until: at(ms: 2000), from: at(ms: 30))
        let station1 = ClockProbeMachine.Station(name: "Rooftop", address: Fixture.djAddress)
        let pings = 1 + effects.messages.filter { $0.tag == "timePing" }.count
        #expect(probe.outcome == .noPong(station1, sent: pings))
        #expect(pings > 20)
    }

    @Test func pongsFromAnotherKeyAreNotCounted() {
        var probe = started()
        var station = Fixture.djPeer
        _ = tuned(&probe, station: &station)
        var impostor = Peer(Fixture.djAddress.host, port: Fixture.djAddress.port, key: 0x66)
        let pong = TimePong(clientSendNs: at(ms: 30).ns, serverReceiveNs: 1, serverSendNs: 2)
        _ = probe.handle(impostor.send(.timePong(pong), station: Fixture.stationID), at: at(ms: 31))
        _ = probe.run(until: at(ms: 2000), from: at(ms: 31))
        guard case .noPong = probe.outcome else {
            Issue.record("expected no pong: \(String(describing: probe.outcome))")
            return
        }
    }

    @Test func avahiFailingEndsTheProbe() {
        var probe = started()
        _ = probe.handle(.discovery(.failed("Daemon not running")), at: at(ms: 5))
        #expect(probe.outcome == .failed("Daemon not running"))
        #expect(probe.nextWakeup == nil)
    }

    @Test func aReadingNeedsASample() {
        #expect(ClockReading(samples: [], sent: 3) == nil)
        let samples = [300, 100, 200].map { rtt in
            TimeSample(t1: 0, t2: -5_000_000 + Int64(rtt) / 2, t3: -5_000_000 + Int64(rtt) / 2, t4: Int64(rtt))
        }
        let reading = ClockReading(samples: samples, sent: 5)
        #expect(reading?.minRoundTripNs == 100 && reading?.medianRoundTripNs == 200)
        #expect(reading?.received == 3 && reading?.sent == 5)
        #expect(reading.map { abs($0.offsetNs + 5_000_000) <= 1 } == true)
    }
}
