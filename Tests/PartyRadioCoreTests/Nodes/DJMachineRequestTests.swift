import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The DJ's side of requests that the CLI relies on: muting a guest who only requested, `approve
/// next` and `drop next` (the keys `a` and `d`), and a vote on a request that has played.
@Suite struct DJMachineRequestTests {
    let id = Fixture.stationID

    func started(mode: RequestMode = .open) -> DJMachine {
        var configuration = Fixture.djConfiguration()
        configuration.requestMode = mode
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    func request(_ dj: inout DJMachine, from guest: inout Peer, _ words: String, requestID: UInt64, name: String)
        -> RequestAck?
    {
        let out = dj.handle(
            guest.send(
                .requestSend(RequestSend(requestID: requestID, name: name, wanted: .library(words))), station: id),
            at: at(ms: 100))
        return out.sent.compactMap { if case .requestAck(let ack) = $0.message { ack } else { nil } }.first
    }

    func notices(_ effects: [Effect]) -> [String] {
        effects.reports.compactMap { if case .notice(let text) = $0 { text } else { nil } }
    }

    @Test func muteFindsAGuestByTheNameOfTheirRequestsDropsThemAndRefusesMore() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        var alice = Peer("10.0.0.9", key: 9)
        #expect(request(&dj, from: &bob, "second", requestID: 1, name: "Bob")?.status == .queued)
        #expect(request(&dj, from: &bob, "third", requestID: 2, name: "Bob")?.status == .queued)
        #expect(request(&dj, from: &alice, "first", requestID: 1, name: "Alice")?.status == .queued)

        let out = dj.handle(.control("mute Bob"), at: at(ms: 200))
        #expect(notices(out) == ["Muted 'Bob': no chat or requests from them; dropped their 2 waiting request(s)."])
        #expect(dj.requests.waiting.map(\.requesterName) == ["Alice"])
        #expect(out.sent.contains { $0.message.tag == "queueList" }, "what plays next changed")
        #expect(dj.requests.outcome(of: 1) == .dropped)
        #expect(request(&dj, from: &bob, "first", requestID: 3, name: "Bob")?.status == .muted)

        let unmuted = dj.handle(.control("unmute Bob"), at: at(ms: 300))
        #expect(notices(unmuted).first?.hasPrefix("Unmuted 'Bob'") == true)
        #expect(request(&dj, from: &bob, "second", requestID: 4, name: "Bob")?.status == .queued)
    }

    @Test func approveNextAndDropNextTakeTheTopOfTheList() {
        var dj = started(mode: .approve)
        var bob = Peer("10.0.0.8", key: 8)
        #expect(dj.handle(.control("approve next"), at: at(ms: 50)).warnings == ["No request waits for your approval."])
        #expect(dj.handle(.control("drop next"), at: at(ms: 50)).warnings == ["No request waits."])
        #expect(request(&dj, from: &bob, "second", requestID: 1, name: "Bob")?.status == .awaitingApproval)
        #expect(request(&dj, from: &bob, "third", requestID: 2, name: "Bob")?.status == .awaitingApproval)

        #expect(notices(dj.handle(.control("approve next"), at: at(ms: 200))) == ["Approved request #1."])
        #expect(notices(dj.handle(.control("approve next"), at: at(ms: 210))) == ["Approved request #2."])
        #expect(
            dj.handle(.control("approve next"), at: at(ms: 220)).warnings == ["No request waits for your approval."])
        #expect(notices(dj.handle(.control("drop next"), at: at(ms: 230))) == ["Dropped request #1."])
        #expect(dj.requests.waiting.map(\.queueID) == [2])
        #expect(throws: ControlError("'drop' takes a request's number, e.g. 'drop 3', or 'next'.")) {
            try DJControl.parse(line: "drop")
        }
    }

    /// Where the next tracks are fetched from follows the play order: an approved request before
    /// the DJ's next track, one awaiting approval not at all; it goes out beside the queue list.
    @Test func nextSourcesFollowThePlayOrder() {
        var dj = started(mode: .approve)
        var bob = Peer("10.0.0.8", key: 8)
        let t1 = NextSources.Entry(trackID: "t1", source: "http://10.0.0.1/1")
        let t2 = NextSources.Entry(trackID: "t2", source: "http://10.0.0.1/2")
        #expect(dj.nextSources?.entries == [t1, t2])
        #expect(request(&dj, from: &bob, "third", requestID: 1, name: "Bob")?.status == .awaitingApproval)
        #expect(dj.nextSources?.entries == [t1, t2], "a request awaiting approval does not play")
        let out = dj.handle(.control("approve next"), at: at(ms: 200))
        #expect(dj.nextSources?.entries == [t2, t1])
        let sent = out.sent.map(\.message.tag)
        let list = sent.firstIndex(of: "queueList")
        #expect(list.map { sent[$0 + 1] } == "nextSources", "\(sent)")
        #expect(out.sent.contains { $0.message == .nextSources(NextSources(entries: [t2, t1])) })
        // A station of library tracks only: listeners derive those URLs, nothing is sent.
        let library = Fixture.tracks.enumerated().map { index, track in
            Track(
                id: "local:tok\(index)", title: track.title, artist: track.artist, album: "", durationMs: 10_000,
                source: "http://10.0.0.1:8080/media/tok\(index)")
        }
        var own = DJMachine(
            configuration: Fixture.djConfiguration(queue: library), verifier: ChecksumVerifier(), now: t0)
        let started = own.handle(.start, at: t0)
        #expect(own.nextSources == nil)
        #expect(!started.sent.contains { $0.message.tag == "nextSources" })
    }

    @Test func aVoteOnARequestThatPlayedSaysSo() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        var carol = Peer("10.0.0.10", key: 10)
        #expect(request(&dj, from: &bob, "third", requestID: 1, name: "Bob")?.queueID == 1)
        _ = dj.handle(.control("next"), at: at(ms: 200))  // the request plays next
        #expect(dj.engine.nowPlaying?.id == "t2")
        let out = dj.handle(
            carol.send(.requestVote(RequestVote(queueID: 1, choice: .up)), station: id), at: at(ms: 300))
        let ack = out.sent.compactMap { if case .requestVoteAck(let ack) = $0.message { ack } else { nil } }.first
        #expect(ack?.status == .played && ack?.queueID == 1)
    }
}
