import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The DJ's save effect and its restart from a saved station, input by input.
@Suite struct DJMachinePersistenceTests {
    let id = Fixture.stationID

    func started(saved: SavedStation? = nil, at now: LocalTime = t0) -> (DJMachine, [Effect]) {
        var configuration = Fixture.djConfiguration()
        configuration.saved = saved
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: now)
        let out = dj.handle(.start, at: now)
        return (dj, out)
    }

    func saves(_ effects: [Effect]) -> [SavedStation] {
        effects.compactMap { if case .save(let station) = $0 { station } else { nil } }
    }

    /// The index of the first effect that sends `tag`, and of the first save.
    func order(_ effects: [Effect], ack tag: String) -> (save: Int?, ack: Int?) {
        let save = effects.firstIndex { if case .save = $0 { true } else { false } }
        let ack = effects.firstIndex { if case .send(let message, _, _) = $0 { message.tag == tag } else { false } }
        return (save, ack)
    }

    @Test func aVoteIsSavedBeforeItsAcknowledgementGoesOut() {
        var (dj, _) = started()
        var guest = Peer("10.0.0.7", key: 7)
        let out = dj.handle(guest.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 100))
        let (save, ack) = order(out, ack: "voteAck")
        #expect(save == 0 && ack != nil)
        #expect(saves(out).first?.votes.choice(of: guest.publicKey) == .up)
        #expect(saves(out).first?.votes.tally == Tally(up: 1))
    }

    @Test func aChatLineIsSavedBeforeItsAcknowledgementGoesOut() {
        var (dj, _) = started()
        var guest = Peer("10.0.0.7", key: 7)
        let send = ChatSend(messageID: 1, name: "Ann", text: "hello")
        let out = dj.handle(guest.send(.chatSend(send), station: id), at: at(ms: 100))
        let (save, ack) = order(out, ack: "chatAck")
        #expect(save == 0 && ack != nil)
        #expect(saves(out).first?.chat.lines.map(\.text) == ["hello"])
    }

    @Test func aLibraryRequestIsSavedBeforeItsAnswerGoesOut() {
        var (dj, _) = started()
        var guest = Peer("10.0.0.7", key: 7)
        let send = RequestSend(requestID: 1, name: "Ann", wanted: .library("third"))
        let out = dj.handle(guest.send(.requestSend(send), station: id), at: at(ms: 100))
        let (save, ack) = order(out, ack: "requestAck")
        #expect(save == 0 && ack != nil)
        #expect(saves(out).first?.requests.waiting.map(\.track.id) == ["t2"])
        #expect(saves(out).first?.requests.waiting.first?.requesterName == "Ann")
    }

    @Test func thePositionIsSavedEverySecondWhilePlayingAndNotWhilePaused() {
        var (dj, out) = started()
        #expect(saves(out).map(\.positionNs) == [0])
        var positions: [Int64] = []
        var now = t0
        for _ in 0..<40 {
            now += Nanos.ms(100)
            positions += saves(dj.handle(.timer, at: now)).map(\.positionNs)
        }
        #expect(positions == [Nanos.seconds(1), Nanos.seconds(2), Nanos.seconds(3), Nanos.seconds(4)])
        out = dj.handle(.control("pause"), at: now + 1)
        #expect(saves(out).map(\.paused) == [true])
        var pausedSaves = 0
        for _ in 0..<30 {
            now += Nanos.ms(100)
            pausedSaves += saves(dj.handle(.timer, at: now)).count
        }
        #expect(pausedSaves == 0)
        #expect(dj.nextWakeup.map { $0 - now <= DJMachine.expiryIntervalNs } == true)
    }

    @Test func goingOffAirSavesFirst() {
        var (dj, _) = started()
        let out = dj.handle(.quit, at: at(ms: 1_500))
        #expect(order(out, ack: "goodbye").save == 0)
        #expect(saves(out).first?.positionNs == Nanos.ms(1_500))
    }

    @Test func aRestartedDJIsTheSameStationWhereItWas() {
        // A DJ plays the second track with votes, a chat line and a request waiting…
        var (first, _) = started()
        _ = first.handle(.control("next"), at: at(ms: 100))
        var ann = Peer("10.0.0.7", key: 7)
        var bob = Peer("10.0.0.8", key: 8)
        _ = first.handle(ann.send(.vote(Vote(trackID: "t1", choice: .up)), station: id), at: at(ms: 200))
        let bobsVote = bob.send(.vote(Vote(trackID: "t1", choice: .down)), station: id)
        _ = first.handle(bobsVote, at: at(ms: 300))
        _ = first.handle(
            ann.send(.chatSend(ChatSend(messageID: 4, name: "Ann", text: "yay")), station: id), at: at(ms: 400))
        _ = first.handle(
            bob.send(.requestSend(RequestSend(requestID: 9, name: "Bob", wanted: .library("first"))), station: id),
            at: at(ms: 500))
        _ = first.handle(.control("volume 40"), at: at(ms: 600))
        _ = first.handle(.control("repeat one"), at: at(ms: 650))
        let last = saves(first.handle(.control("seek 7"), at: at(ms: 700))).last
        guard let last else {
            Issue.record("no save")
            return
        }

        // …is killed, and started again from what it saved.
        let restart = at(ms: 5_000)
        var (second, out) = started(saved: last, at: restart)
        #expect(second.engine.nowPlaying?.id == "t1")
        #expect(second.engine.positionNs(at: DJTime(onTheDJ: restart)) == Nanos.seconds(7))
        #expect(second.engine.votes.tally == Tally(up: 1, down: 1))
        #expect(second.chat.lines.map(\.text) == ["yay"])
        #expect(second.requests.waiting.map(\.track.id) == ["t0"])
        #expect(second.volume == 40 && second.engine.repeatMode == .one)
        #expect(out.reports.map(\.brief).contains { $0.contains("Carrying on from the saved station") })
        #expect(out.player.contains(.volume(40)))
        #expect(out.snapshots(to: .group(Fixture.group)).first?.tally == Tally(up: 1, down: 1))
        #expect(second.saved(at: restart) == last)

        // A vote already counted is not counted twice; a chat retry is a duplicate; a request retry
        // gets the same answer.
        let again = second.handle(ann.send(.vote(Vote(trackID: "t1", choice: .up)), station: id), at: restart + 1)
        let tallies: [Tally] = again.sent.compactMap { if case .voteAck(let a) = $0.message { a.tally } else { nil } }
        #expect(tallies == [Tally(up: 1, down: 1)])
        let retry = second.handle(
            ann.send(.chatSend(ChatSend(messageID: 4, name: "Ann", text: "yay")), station: id), at: restart + 2)
        let chat: [ChatAck.Status] = retry.sent.compactMap {
            if case .chatAck(let a) = $0.message { a.status } else { nil }
        }
        #expect(chat == [.duplicate])
        let request = second.handle(
            bob.send(.requestSend(RequestSend(requestID: 9, name: "Bob", wanted: .library("first"))), station: id),
            at: restart + 3)
        let answers: [RequestAck.Status] = request.sent.compactMap {
            if case .requestAck(let a) = $0.message { a.status } else { nil }
        }
        #expect(answers == [.queued])
        #expect(second.requests.waiting.count == 1)

        // Bob's vote datagram replayed (the restart emptied the replay windows): the saved sequence
        // stops it, and the answer says it was not counted rather than "counted".
        let replayed = second.handle(bobsVote, at: restart + 4)
        let acks: [VoteAck] = replayed.sent.compactMap { if case .voteAck(let a) = $0.message { a } else { nil } }
        #expect(acks.map(\.status) == [.superseded])
        #expect(acks.first.map { AckText.sentence($0).hasPrefix("Not counted") } == true)
        #expect(second.engine.votes.tally == Tally(up: 1, down: 1))
    }

    /// A request vote datagram recorded before a restart, replayed after it (the replay windows
    /// start empty): the sequence saved with the request stops it, as for track votes.
    @Test func aRequestVoteIsNotReplayedAfterARestart() {
        var (first, _) = started()
        var bob = Peer("10.0.0.8", key: 8)
        var ann = Peer("10.0.0.7", key: 7)
        _ = first.handle(
            bob.send(.requestSend(RequestSend(requestID: 1, name: "Bob", wanted: .library("third"))), station: id),
            at: at(ms: 100))
        let queueID = first.requests.waiting.first?.queueID ?? 0
        // Ann votes the request up, then down; a recording has both datagrams.
        let up = ann.send(.requestVote(RequestVote(queueID: queueID, choice: .up)), station: id)
        _ = first.handle(up, at: at(ms: 200))
        let down = ann.send(.requestVote(RequestVote(queueID: queueID, choice: .down)), station: id)
        let last = saves(first.handle(down, at: at(ms: 300))).last
        #expect(first.requests.waiting.first?.tally == Tally(down: 1))
        guard let last else {
            Issue.record("no save")
            return
        }

        let restart = at(ms: 5_000)
        var (second, _) = started(saved: last, at: restart)
        #expect(second.requests.waiting.first?.tally == Tally(down: 1))
        // The old up vote replayed: nothing changes, and the answer says how the vote stands.
        let replayed = second.handle(up, at: restart + 1)
        let acks: [RequestVoteAck] = replayed.sent.compactMap {
            if case .requestVoteAck(let a) = $0.message { a } else { nil }
        }
        #expect(acks.map(\.choice) == [.down] && acks.map(\.tally) == [Tally(down: 1)])
        #expect(second.requests.waiting.first?.tally == Tally(down: 1))
        // The last one replayed changes nothing either; a new vote from Ann still counts.
        _ = second.handle(down, at: restart + 2)
        #expect(second.requests.waiting.first?.tally == Tally(down: 1))
        _ = second.handle(
            ann.send(.requestVote(RequestVote(queueID: queueID, choice: .up)), station: id), at: restart + 3)
        #expect(second.requests.waiting.first?.tally == Tally(up: 1))
    }

    @Test func aRestartWhilePausedStaysPaused() {
        var (first, _) = started()
        let paused = saves(first.handle(.control("pause"), at: at(ms: 2_500))).last
        let (second, out) = started(saved: paused, at: at(ms: 60_000))
        #expect(second.engine.isPaused)
        #expect(second.engine.positionNs(at: DJTime(onTheDJ: at(ms: 90_000))) == Nanos.ms(2_500))
        #expect(out.player.contains(.load(Fixture.tracks[0], paused: true)))
    }
}
