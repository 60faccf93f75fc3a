import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Who a counted vote came from, as the DJ reports it: the name the guest gave as a listener when
/// the DJ knows one (it is the guest's word, cleaned when it arrived), else its key's fingerprint.
@Suite struct DJVoterNameTests {
    let id = Fixture.stationID

    func started() -> DJMachine { Fixture.startedDJ() }

    /// The voters of the `voteCounted` reports: (fingerprint, name).
    func voters(_ effects: [Effect]) -> [(voter: String, name: String?)] {
        effects.reports.compactMap { if case .voteCounted(_, _, _, let v, let n) = $0 { (v, n) } else { nil } }
    }

    @Test func aListenersVoteNamesItByTheNameItGave() {
        var dj = started()
        var ann = Peer("10.0.0.7", key: 7)
        _ = dj.handle(ann.send(.hello(Hello(listenerName: "Ann")), station: id), at: at(ms: 50))
        let out = dj.handle(ann.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 100))
        #expect(voters(out).map(\.name) == ["Ann"])
        #expect(voters(out).map(\.voter) == [ann.publicKey.fingerprint])
    }

    @Test func aNameWithEscapesIsCleanedAndAStrangerIsItsFingerprint() {
        var dj = started()
        var eve = Peer("10.0.0.9", key: 9)
        _ = dj.handle(eve.send(.hello(Hello(listenerName: "E\u{1B}[2Jve\u{202E}")), station: id), at: at(ms: 50))
        let named = dj.handle(eve.send(.vote(Vote(trackID: "t0", choice: .down)), station: id), at: at(ms: 100))
        #expect(voters(named).map(\.name) == ["Eve"])  // the whole escape sequence goes (ShownText)
        var stranger = Peer("10.0.0.10", key: 10)
        let unnamed = dj.handle(stranger.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 150))
        #expect(voters(unnamed).map(\.name) == [nil])
        // Heard by heartbeat alone, a listener is listed under its fingerprint, which is no name.
        var quiet = Peer("10.0.0.11", key: 11)
        _ = dj.handle(quiet.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 200))
        let beat = dj.handle(quiet.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 250))
        #expect(voters(beat).map(\.name) == [nil])
    }
}
