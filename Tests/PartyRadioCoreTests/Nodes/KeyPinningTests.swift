import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Trust on first use: a listener remembers the key a station name showed and refuses another.
@Suite struct KeyPinningTests {
    func listener(known: [String: PublicKey], trustNewKey: Bool = false) -> ListenerMachine {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(10), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: false, knownKeys: known, trustNewKey: trustNewKey),
            verifier: ChecksumVerifier())
        _ = machine.handle(.start, at: t0)
        return machine
    }

    /// The station found: resolved, then its answer to the listener's query.
    func find(_ machine: inout ListenerMachine) -> [Effect] {
        var out = machine.handle(Fixture.resolved(), at: at(ms: 10))
        var dj = Fixture.djPeer
        let snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 20).ns))
        out += machine.handle(dj.send(.stateSnapshot(snapshot), station: Fixture.stationID), at: at(ms: 20))
        out += machine.handle(.discovery(.allForNow), at: at(ms: 30))
        out += machine.run(until: at(ms: 2_000), from: at(ms: 30))
        return out
    }

    func pins(_ effects: [Effect]) -> [String] {
        effects.compactMap { if case .pin(let name, let key) = $0 { "\(name) \(key.fingerprint)" } else { nil } }
    }

    @Test func aNewStationIsRememberedAndAKnownOneTrusted() {
        var first = listener(known: [:])
        let out = find(&first)
        #expect(first.tuned != nil)
        #expect(pins(out) == ["Rooftop \(Fixture.advert.publicKey.fingerprint)"])

        var again = listener(known: ["Rooftop": Fixture.advert.publicKey])
        let second = find(&again)
        #expect(again.tuned != nil && pins(second).isEmpty)
    }

    @Test func anotherKeyUnderAKnownNameIsRefusedLoudly() {
        let other = testKey(0x66)
        var machine = listener(known: ["Rooftop": other])
        let out = find(&machine)
        #expect(machine.tuned == nil && machine.isFinished && machine.exitError?.code == .refused)
        #expect(machine.exitError?.description.contains("--trust-new-key") == true)
        #expect(out.reports.contains { $0.tag == "stationKeyChanged" })
        #expect(pins(out).isEmpty)

        var trusting = listener(known: ["Rooftop": other], trustNewKey: true)
        let accepted = find(&trusting)
        #expect(trusting.tuned != nil)
        #expect(pins(accepted) == ["Rooftop \(Fixture.advert.publicKey.fingerprint)"])
    }
}
