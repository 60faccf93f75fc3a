import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Which station the user meant, and when it is safe to say.
@Suite struct StationFinderTests {
    /// A watch that resolved and heard Rooftop and Basement, before or after the first sweep.
    func watch(sweepDone: Bool) -> StationWatch {
        var watch = StationWatch()
        var out: [Effect] = []
        var filter = DatagramFilter(verifier: ChecksumVerifier())
        for (input, peer, name, id) in [
            (Fixture.resolved(), Fixture.djPeer, "Rooftop", Fixture.stationID),
            (OtherStation.resolved, OtherStation.peer, "Basement", Fixture.otherStationID),
        ] {
            guard case .discovery(let event) = input else { continue }
            _ = watch.handle(event, into: &out)
            var sender = peer
            let bytes = sender.bytes(.stateSnapshot(Fixture.snapshot(name: name, dj: DJTime(ns: 1))), station: id)
            if let inbound = filter.accept(bytes, from: sender.address, at: at(ms: 10), policy: watch.policy) {
                _ = watch.handle(inbound, now: at(ms: 10))
            }
        }
        if sweepDone { _ = watch.handle(.allForNow, into: &out) }
        _ = watch.tick(now: at(ms: 20), into: &out)
        return watch
    }

    func outcome(_ query: String?, sweepDone: Bool, now: LocalTime = at(ms: 20)) -> String {
        let finder = StationFinder(query: query, deadline: at(ms: 1_000), interfaceName: "eth0")
        switch finder.check(watch(sweepDone: sweepDone), now: now) {
        case .waiting: return "waiting"
        case .found(let station): return "found \(station.name)"
        case .failed(let error): return "\(error.code.rawValue): \(error.description)"
        }
    }

    @Test func exactNamesAndIDsAreFoundAtOnceAndPrefixesAfterTheSweep() {
        #expect(outcome("Rooftop", sweepDone: false) == "found Rooftop")
        #expect(outcome(Fixture.otherStationID.hex.uppercased(), sweepDone: false) == "found Basement")
        #expect(outcome("roof", sweepDone: false) == "waiting")  // "Roofless" might still answer
        #expect(outcome("roof", sweepDone: true) == "found Rooftop")
        #expect(outcome("rooftop", sweepDone: true) == "found Rooftop")
    }

    @Test func ambiguityAndAbsenceAreErrorsThatSayWhatIsOnTheAir() {
        #expect(outcome(nil, sweepDone: false) == "waiting")
        let several = outcome(nil, sweepDone: true)
        #expect(several.hasPrefix("usage: Several stations are on the air: Basement ("))
        #expect(outcome("Cellar", sweepDone: true) == "waiting")  // until the deadline
        let missing = outcome("Cellar", sweepDone: true, now: at(ms: 1_000))
        #expect(missing.hasPrefix("not_found: No station matches 'Cellar' (on the air: Basement, Rooftop)"))
    }

    @Test func aStationAnnouncedButSilentIsSaidToBeSo() {
        // Resolved (DNS-SD still announces it: a DJ killed without withdrawing it), never heard.
        var watch = StationWatch()
        var out: [Effect] = []
        guard case .discovery(let event) = Fixture.resolved() else {
            Issue.record("the fixture is a resolution")
            return
        }
        _ = watch.handle(event, into: &out)
        _ = watch.handle(.allForNow, into: &out)
        let finder = StationFinder(query: "rooftop", deadline: at(ms: 1_000), interfaceName: "eth0")
        guard case .waiting = finder.check(watch, now: at(ms: 999)) else {
            Issue.record("it waits until the deadline, in case the DJ answers late")
            return
        }
        guard case .failed(let error) = finder.check(watch, now: at(ms: 1_000)) else {
            Issue.record("not found")
            return
        }
        #expect(error.code == .notFound)
        #expect(error.description.hasPrefix("'Rooftop' is announced (at "), "\(error.description)")
        #expect(error.description.contains("does not answer"))
        // Another name is still simply not there.
        let other = StationFinder(query: "Cellar", deadline: at(ms: 1_000), interfaceName: "eth0")
        guard case .failed(let missing) = other.check(watch, now: at(ms: 1_000)) else {
            Issue.record("not found")
            return
        }
        #expect(missing.description.hasPrefix("No station matches 'Cellar' (none is on the air)"))
    }
}
