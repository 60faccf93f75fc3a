import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Trust on first use: a listener remembers the key a station name showed and refuses another, and
/// every guest command (`vote`, `chat`, `request`, `queue`) refuses it the same way.
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

    /// A guest's command over its request, with the keys its state directory met before.
    func guest<Request: StationRequest>(_ request: Request, known: [String: PublicKey], trustNewKey: Bool = false)
        -> GuestExchange<Request>
    {
        GuestExchange(
            request, station: "Rooftop", timeoutNs: Nanos.seconds(10), interfaceName: "eth0",
            verifier: ChecksumVerifier(), pins: KeyPins(known: known, trustNewKey: trustNewKey))
    }

    /// The station found by a guest: resolved, then its answer to the guest's query.
    func find<Request: StationRequest>(_ machine: inout GuestExchange<Request>) -> [Effect] {
        var out = machine.handle(.start, at: t0)
        out += machine.handle(Fixture.resolved(), at: at(ms: 10))
        var dj = Fixture.djPeer
        let snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 20).ns))
        out += machine.handle(dj.send(.stateSnapshot(snapshot), station: Fixture.stationID), at: at(ms: 20))
        return out
    }

    /// What a guest sent the station after finding it: anything but the queries that found it.
    func requests(_ effects: [Effect]) -> [String] {
        effects.messages.map(\.tag).filter { $0 != "query" && $0 != "timePing" }
    }

    @Test func everyGuestCommandRefusesAnotherKeyAsTheListenerDoes() {
        let other = testKey(0x66)
        var listening = listener(known: ["Rooftop": other])
        _ = find(&listening)
        let refusal = listening.exitError

        func check<Request: StationRequest>(_ request: Request) {
            var machine = guest(request, known: ["Rooftop": other])
            let out = find(&machine)
            // Refused before anything is asked: the same error, code and report as `listen`.
            #expect(machine.isFinished && machine.result == nil, "\(request)")
            #expect(
                machine.exitError?.code == refusal?.code && machine.exitError?.description == refusal?.description,
                "\(request)")
            #expect(out.reports.contains { $0.tag == "stationKeyChanged" }, "\(request)")
            #expect(requests(out).isEmpty, "\(request): \(requests(out))")
            #expect(pins(out).isEmpty)

            // With --trust-new-key it goes on, and the new key is remembered.
            var trusting = guest(request, known: ["Rooftop": other], trustNewKey: true)
            let accepted = find(&trusting)
            #expect(trusting.exitError == nil && !trusting.isFinished, "\(request)")
            #expect(pins(accepted) == ["Rooftop \(Fixture.advert.publicKey.fingerprint)"])

            // A name met for the first time is remembered, as by `listen`.
            var first = guest(request, known: [:])
            #expect(pins(find(&first)) == ["Rooftop \(Fixture.advert.publicKey.fingerprint)"])
        }
        check(GuestVote(.up))
        check(GuestChat(ChatSend(messageID: 1, name: "me", text: "hi")))
        check(GuestTrackRequest(.library("Second"), name: "me"))
        check(GuestRequestVote(RequestVote(queueID: 1, choice: .up)))
        check(GuestQueueRead())
        #expect(refusal?.code == .refused && refusal?.description.contains("--trust-new-key") == true)
    }
}
