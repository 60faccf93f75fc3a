import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Requests on the DJ machine: answered to the guest, listed for everyone, played between queue
/// tracks, saved before they are acknowledged, restored after a restart.
@Suite struct DJRequestTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)
    static let catalogTrack = Track(
        id: "1440857781", title: "Catalog Song", artist: "Someone", album: "", durationMs: 30_000,
        source: "https://audio.example/preview.m4a")

    func started(
        queue: [Track] = Fixture.tracks, mode: RequestMode = .open, maxRequests: Int = 3, saved: SavedStation? = nil
    ) -> DJMachine {
        var configuration = Fixture.djConfiguration(queue: queue)
        configuration.requestMode = mode
        configuration.maxRequestsPerGuest = maxRequests
        configuration.saved = saved
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    func acks(_ effects: [Effect], to peer: Peer) -> [RequestAck] {
        effects.sent.compactMap {
            if case .requestAck(let ack) = $0.message, $0.to == .peer(peer.address) { ack } else { nil }
        }
    }

    func lists(_ effects: [Effect]) -> [QueueList] {
        effects.sent.compactMap { if case .queueList(let list) = $0.message, $0.to == group { list } else { nil } }
    }

    func library(_ id: UInt64, _ words: String) -> Message {
        .requestSend(RequestSend(requestID: id, name: "Bob", wanted: .library(words)))
    }

    @Test func aLibraryRequestIsQueuedListedAndPlayedAfterTheCurrentTrack() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        let out = dj.handle(bob.send(library(1, "third"), station: id), at: at(ms: 1_000))
        let ack = acks(out, to: bob)
        #expect(ack.map(\.status) == [.queued] && ack.first?.title == "Third" && ack.first?.position == 1)
        #expect(lists(out).last?.entries.first.map { "\($0.queueID) \($0.trackID) \($0.requester)" } == "1 t2 Bob")
        #expect(out.reports.map(\.brief).contains("request Bob queued #1 at 1"))
        // What must survive a crash is saved before the answer goes out.
        guard case .save(let saved) = out.first else {
            Issue.record("the first effect is not a save: \(out.first.map { "\($0)" } ?? "none")")
            return
        }
        #expect(saved.requests.waiting.map(\.track.id) == ["t2"])

        // t0 (10 s) ends: the request plays, then the queue carries on with t1.
        let end = dj.run(until: at(ms: 10_100), from: at(ms: 1_000))
        #expect(dj.engine.nowPlaying?.id == "t2" && dj.engine.interlude?.queueID == 1)
        #expect(dj.requests.waiting.isEmpty)
        #expect(lists(end).last?.total == 0)
        _ = dj.run(until: at(ms: 40_200), from: at(ms: 10_100))
        #expect(dj.engine.nowPlaying?.id == "t1" && dj.engine.interlude == nil)

        // A vote on it now says it has played.
        let late = dj.handle(
            bob.send(.requestVote(RequestVote(queueID: 1, choice: .up)), station: id), at: at(ms: 40_300))
        let voteAcks = late.sent.compactMap { if case .requestVoteAck(let a) = $0.message { a } else { nil } }
        #expect(voteAcks.map(\.status) == [.played])
    }

    @Test func theStatsKnowWhoAskedForAPlay() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        _ = dj.handle(bob.send(library(1, "second"), station: id), at: at(ms: 500))
        let out = dj.run(until: at(ms: 30_100), from: at(ms: 500))
        #expect(out.records.map { "\($0.trackID) \($0.requestedBy ?? "-")" } == ["t0 -", "t1 Bob"])
    }

    @Test func aCatalogRequestIsLookedUpAndAnsweredWhenTheCatalogAnswers() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        let send = Message.requestSend(
            RequestSend(requestID: 5, name: "Bob", wanted: .catalogID(Self.catalogTrack.id)))
        let out = dj.handle(bob.send(send, station: id), at: at(ms: 100))
        guard case .requestedTrack(let asked, let ticket) = out.catalog.first else {
            Issue.record("no lookup: \(out.catalog)")
            return
        }
        #expect(asked == Self.catalogTrack.id && ticket.origin == .node(bob.address) && ticket.name == "Bob")
        #expect(acks(out, to: bob).isEmpty)
        // A retry meanwhile is neither answered nor looked up twice.
        let retry = dj.handle(bob.send(send, station: id), at: at(ms: 300))
        #expect(acks(retry, to: bob).isEmpty && retry.catalog.isEmpty)

        let answered = dj.handle(
            .catalog(.requestedTrack(Self.catalogTrack, failure: nil, for: ticket)), at: at(ms: 400))
        #expect(acks(answered, to: bob).map(\.status) == [.queued])
        #expect(dj.requests.waiting.map(\.track) == [Self.catalogTrack])
    }

    @Test func aFailedLookupIsUnavailableAndAnUnknownIDUnknown() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        let send = Message.requestSend(RequestSend(requestID: 5, name: "Bob", wanted: .catalogID("404")))
        var out = dj.handle(bob.send(send, station: id), at: at(ms: 100))
        guard case .requestedTrack(_, let ticket) = out.catalog.first else {
            Issue.record("no lookup")
            return
        }
        out = dj.handle(.catalog(.requestedTrack(nil, failure: "timed out", for: ticket)), at: at(ms: 200))
        #expect(acks(out, to: bob).map(\.status) == [.unavailable])
        // The guest's retry is looked up again; this time the catalog has no such track.
        out = dj.handle(bob.send(send, station: id), at: at(ms: 400))
        #expect(out.catalog.count == 1)
        out = dj.handle(.catalog(.requestedTrack(nil, failure: nil, for: ticket)), at: at(ms: 500))
        #expect(acks(out, to: bob).map(\.status) == [.unknownTrack])
        #expect(dj.requests.waiting.isEmpty)
    }

    /// A DJ without internet: its lookups hang on DNS and connect timeouts for seconds, longer
    /// than a guest waits. The guest hears "unavailable" one second after asking, and a lookup
    /// answered later queues nothing.
    @Test func aLookupWithNoAnswerWithinASecondIsUnavailable() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        let send = Message.requestSend(
            RequestSend(requestID: 5, name: "Bob", wanted: .catalogID(Self.catalogTrack.id)))
        let asked = dj.handle(bob.send(send, station: id), at: at(ms: 100))
        guard case .requestedTrack(_, let ticket) = asked.catalog.first else {
            Issue.record("no lookup: \(asked.catalog)")
            return
        }
        #expect(acks(dj.run(until: at(ms: 1_050), from: at(ms: 100)), to: bob).isEmpty)
        let expired = dj.run(until: at(ms: 1_150), from: at(ms: 1_050))
        #expect(acks(expired, to: bob).map(\.status) == [.unavailable])
        let late = dj.handle(
            .catalog(.requestedTrack(Self.catalogTrack, failure: nil, for: ticket)), at: at(ms: 9_000))
        #expect(acks(late, to: bob).isEmpty)
        #expect(dj.requests.waiting.isEmpty)
    }

    /// Catalog IDs are digits: anything else is answered "no such track" at once, never looked up.
    @Test func aNonNumericCatalogIDIsNoTrackWithoutALookup() {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        for (n, raw) in ["abc", "12a4", "../1", "１２３"].enumerated() {
            let send = Message.requestSend(RequestSend(requestID: UInt64(n + 1), name: "Bob", wanted: .catalogID(raw)))
            let out = dj.handle(bob.send(send, station: id), at: at(ms: 100 + 100 * Int64(n)))
            #expect(out.catalog.isEmpty, "\(raw) was looked up")
            #expect(acks(out, to: bob).map(\.status) == [.unknownTrack], "\(raw)")
        }
    }

    @Test func badRequestsAreRefusedAndChangeNothing() {
        var dj = started(maxRequests: 1)
        var bob = Peer("10.0.0.8", key: 8)
        #expect(
            acks(dj.handle(bob.send(library(1, "no such words"), station: id), at: at(ms: 100)), to: bob).map(\.status)
                == [.unknownTrack])
        #expect(
            acks(dj.handle(bob.send(library(2, "second"), station: id), at: at(ms: 200)), to: bob).map(\.status) == [
                .queued
            ])
        let over = acks(dj.handle(bob.send(library(3, "third"), station: id), at: at(ms: 300)), to: bob)
        #expect(over.map(\.status) == [.overLimit] && over.first?.limit == 1)

        // A muted guest.
        _ = dj.handle(.control("mute \(bob.publicKey.fingerprint)"), at: at(ms: 400))
        #expect(
            acks(dj.handle(bob.send(library(4, "first"), station: id), at: at(ms: 500)), to: bob).map(\.status) == [
                .muted
            ])
        #expect(dj.requests.waiting.isEmpty)  // muting drops their waiting requests

        var off = started(mode: .off)
        #expect(
            acks(off.handle(bob.send(library(1, "second"), station: id), at: at(ms: 100)), to: bob).map(\.status) == [
                .requestsOff
            ])
    }

    @Test func theDJApprovesAndDrops() {
        var dj = started(mode: .approve)
        var bob = Peer("10.0.0.8", key: 8)
        #expect(
            acks(dj.handle(bob.send(library(1, "second"), station: id), at: at(ms: 100)), to: bob).map(\.status) == [
                .awaitingApproval
            ])
        _ = dj.handle(bob.send(library(2, "third"), station: id), at: at(ms: 200))
        // Not approved: the queue carries on with its own next track.
        _ = dj.handle(.control("next"), at: at(ms: 300))
        #expect(dj.engine.nowPlaying?.id == "t1" && dj.engine.interlude == nil)
        let approved = dj.handle(.control("approve 2"), at: at(ms: 400))
        #expect(approved.reports.map(\.brief).contains("notice Approved request #2."))
        let dropped = dj.handle(.control("drop #1"), at: at(ms: 500))
        #expect(lists(dropped).last?.entries.filter(\.isRequest).map(\.queueID) == [2])
        let again = dj.handle(.control("drop 1"), at: at(ms: 600))
        #expect(again.warnings == ["Cannot drop request #1: it has already been dropped."])
        _ = dj.handle(.control("next"), at: at(ms: 800))
        #expect(dj.engine.nowPlaying?.id == "t2" && dj.engine.interlude?.queueID == 2)
    }

    @Test func aStationWithNothingToPlayPlaysARequestAtOnce() {
        var dj = started(queue: [])
        var bob = Peer("10.0.0.8", key: 8)
        let out = dj.handle(
            bob.send(
                .requestSend(RequestSend(requestID: 1, name: "Bob", wanted: .catalogID("1440857781"))), station: id),
            at: at(ms: 100))
        guard case .requestedTrack(_, let ticket) = out.catalog.first else {
            Issue.record("no lookup")
            return
        }
        let answered = dj.handle(
            .catalog(.requestedTrack(Self.catalogTrack, failure: nil, for: ticket)), at: at(ms: 200))
        #expect(dj.engine.nowPlaying == Self.catalogTrack)
        #expect(answered.player == [.load(Self.catalogTrack, paused: false)])
    }

    @Test func aQueryIsAnsweredWithTheListBeforeTheSnapshot() {
        var dj = started()
        var watcher = Peer("10.0.0.9", key: 9)
        let out = dj.handle(watcher.send(.query(Query()), station: id), at: at(ms: 100))
        #expect(
            out.sent.filter { $0.to == .peer(watcher.address) }.map(\.message.tag) == [
                "roster", "queueList", "stateSnapshot",
            ])
    }

    @Test func aRestartedDJCarriesOnFromItsSavedStation() throws {
        var dj = started()
        var bob = Peer("10.0.0.8", key: 8)
        var voter = Peer("10.0.0.9", key: 9)
        _ = dj.handle(bob.send(library(1, "third"), station: id), at: at(ms: 100))
        _ = dj.handle(voter.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 200))
        _ = dj.handle(
            bob.send(.chatSend(ChatSend(messageID: 3, name: "Bob", text: "hi")), station: id), at: at(ms: 300))
        _ = dj.handle(.control("repeat one"), at: at(ms: 400))
        let saved = dj.saved(at: at(ms: 4_000))
        #expect(saved.positionNs == Nanos.ms(4_000))

        // A new process: a later clock, the same saved station.
        let later = at(ms: 60_000)
        var configuration = Fixture.djConfiguration(queue: [])
        configuration.saved = saved
        var back = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: later)
        let out = back.handle(.start, at: later)
        #expect(
            back.engine.nowPlaying?.id == "t0" && back.engine.positionNs(at: DJTime(onTheDJ: later)) == Nanos.ms(4_000))
        #expect(back.engine.votes.tally == Tally(up: 1) && back.engine.repeatMode == .one)
        #expect(back.requests.waiting.map(\.track.id) == ["t2"] && back.chat.lines.map(\.text) == ["hi"])
        #expect(out.player == [.load(Fixture.tracks[0], paused: false)])
        // The same vote again is not counted twice; the chat retry is recognised.
        let vote = back.handle(voter.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: later + 100)
        #expect(back.engine.votes.tally == Tally(up: 1) && !vote.reportTags.contains("voteCounted"))
        let chat = back.handle(
            bob.send(.chatSend(ChatSend(messageID: 3, name: "Bob", text: "hi")), station: id), at: later + 200)
        let chatAcks: [ChatAck.Status] = chat.sent.compactMap {
            if case .chatAck(let a) = $0.message { a.status } else { nil }
        }
        #expect(chatAcks == [.duplicate])
    }

    @Test func thePositionIsSavedEverySecondWhilePlaying() {
        var dj = started()
        let out = dj.run(until: at(ms: 3_500), from: at(ms: 1))
        let saves = out.compactMap { if case .save(let s) = $0 { s.positionNs } else { nil } }
        #expect(saves.count >= 3)
        _ = dj.handle(.control("pause"), at: at(ms: 3_600))
        let paused = dj.run(until: at(ms: 8_000), from: at(ms: 3_600))
        #expect(paused.filter { if case .save = $0 { true } else { false } }.isEmpty)
    }
}

extension DJRequestTests {
    @Test func theDJCountsOneVoterPerAddressUnlessToldOtherwise() {
        var dj = started()
        var first = Peer("10.0.0.8", key: 8)
        var fresh = Peer("10.0.0.8", key: 9)
        _ = dj.handle(first.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 100))
        let out = dj.handle(fresh.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 200))
        let statuses: [VoteAck.Status] = out.sent.compactMap {
            if case .voteAck(let ack) = $0.message { ack.status } else { nil }
        }
        #expect(statuses == [.addressLimit] && dj.engine.votes.tally == Tally(up: 1))

        var configuration = Fixture.djConfiguration()
        configuration.votersPerAddress = 2
        var shared = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = shared.handle(.start, at: t0)
        _ = shared.handle(first.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 100))
        _ = shared.handle(fresh.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 200))
        #expect(shared.engine.votes.tally == Tally(up: 2))
    }
}

extension DJRequestTests {
    @Test func anApprovedRequestPlaysAtOnceWhenNothingElseDoes() {
        var dj = started(queue: [], mode: .approve)
        var bob = Peer("10.0.0.8", key: 8)
        let send = Message.requestSend(RequestSend(requestID: 1, name: "Bob", wanted: .catalogID("1440857781")))
        let out = dj.handle(bob.send(send, station: id), at: at(ms: 100))
        guard case .requestedTrack(_, let ticket) = out.catalog.first else {
            Issue.record("no lookup")
            return
        }
        _ = dj.handle(.catalog(.requestedTrack(Self.catalogTrack, failure: nil, for: ticket)), at: at(ms: 200))
        #expect(dj.engine.nowPlaying == nil)  // waits for the DJ
        let approved = dj.handle(.control("approve 1"), at: at(ms: 300))
        #expect(dj.engine.nowPlaying == Self.catalogTrack && !dj.engine.isPaused)
        #expect(approved.player == [.load(Self.catalogTrack, paused: false)])
    }

    @Test func aRequestPlaysAfterTheQueueEndedWithRepeatOff() {
        var dj = started()
        _ = dj.handle(.control("repeat off"), at: at(ms: 10))
        _ = dj.run(until: at(ms: 61_000), from: at(ms: 10))  // 10 + 20 + 30 s: the end
        #expect(dj.engine.isPaused)
        var bob = Peer("10.0.0.8", key: 8)
        _ = dj.handle(bob.send(library(1, "second"), station: id), at: at(ms: 62_000))
        #expect(dj.engine.nowPlaying?.id == "t1" && dj.engine.interlude?.queueID == 1 && !dj.engine.isPaused)
    }
}

extension DJRequestTests {
    @Test func muteByNameTakesEveryKeyOfThatGuest() {
        var dj = started()
        // Bob listens with one key and chats with another (listener.key and voter.key).
        var listening = Peer("10.0.0.8", key: 8)
        var chatting = Peer("10.0.0.8", key: 9)
        _ = dj.handle(listening.send(.hello(Hello(listenerName: "Bob")), station: id), at: at(ms: 100))
        _ = dj.handle(
            chatting.send(.chatSend(ChatSend(messageID: 1, name: "Bob", text: "hi")), station: id), at: at(ms: 200))
        let muted = dj.handle(.control("mute Bob"), at: at(ms: 300))
        #expect(muted.warnings.isEmpty)
        #expect(dj.chat.muted == [listening.publicKey.fingerprint, chatting.publicKey.fingerprint])
        let request = dj.handle(listening.send(library(2, "second"), station: id), at: at(ms: 400))
        #expect(acks(request, to: listening).map(\.status) == [.muted])
        // Unmuting the name frees both.
        _ = dj.handle(.control("unmute Bob"), at: at(ms: 500))
        #expect(dj.chat.muted.isEmpty)
    }
}
