import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The guests' request commands as machines: ``GuestExchange`` over `request`
/// (``GuestTrackRequest``), `queue` (``GuestQueueRead``) and `vote --request`
/// (``GuestRequestVote``), input by input.
@Suite struct RequestMachinesTests {
    let id = Fixture.stationID
    let toDJ = Destination.peer(Fixture.djAddress)
    let catalogTracks = [
        Track(id: "617154366", title: "Get Lucky", artist: "Daft Punk", album: "", durationMs: 30_000, source: "a"),
        Track(id: "697195462", title: "One More Time", artist: "Daft Punk", album: "", durationMs: 30_000, source: "b"),
    ]

    func requester(_ query: GuestTrackRequest.Query, timeoutMs: Int64 = 3_000) -> GuestExchange<GuestTrackRequest> {
        GuestExchange(
            GuestTrackRequest(query, name: "Bob"), station: "Rooftop", timeoutNs: Nanos.ms(timeoutMs),
            interfaceName: "eth0", verifier: ChecksumVerifier())
    }

    /// Started and resolved; the station answers at 100 ms. Returns the effects of every input.
    func found<M: NodeMachine>(_ machine: inout M, _ station: inout Peer) -> [Effect] {
        var out = machine.handle(.start, at: t0)
        out += machine.handle(Fixture.resolved(), at: at(ms: 20))
        let snapshot = Fixture.snapshot(dj: DJTime(ns: 5))
        return out + machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
    }

    func requests(_ effects: [Effect]) -> [RequestSend] {
        effects.sent.compactMap { if case .requestSend(let send) = $0.message { send } else { nil } }
    }

    func ack(_ station: inout Peer, _ requestID: UInt64, _ status: RequestAck.Status, queueID: UInt32 = 4)
        -> NodeInput
    {
        let queued = status.isQueued
        return station.send(
            .requestAck(
                RequestAck(
                    requestID: requestID, status: status, queueID: queued ? queueID : 0, position: queued ? 2 : 0,
                    limit: 3, title: queued ? "Get Lucky" : "", artist: queued ? "Daft Punk" : "")),
            station: id)
    }

    // MARK: request

    @Test func aCatalogIDIsSentOnceFoundAndRetriedUntilItsAnswer() {
        var machine = requester(.catalogID("617154366"))
        var station = Fixture.djPeer
        let first = requests(found(&machine, &station))
        #expect(first.map(\.wanted) == [.catalogID("617154366")])
        #expect(first.first?.name == "Bob")
        // The ID is the clock in microseconds, so a later request from the same key is higher.
        let requestID = UInt64(t0.ns / 1000)
        #expect(first.first?.requestID == requestID)
        let retries = requests(machine.run(until: at(ms: 500), from: at(ms: 100)))
        #expect(retries.count == 2 && retries.allSatisfy { $0.requestID == requestID })
        // An answer to another ID (an earlier run's) is not this one's.
        _ = machine.handle(ack(&station, requestID - 1, .queued), at: at(ms: 510))
        #expect(!machine.isFinished)
        #expect(machine.handle(ack(&station, requestID, .queued), at: at(ms: 520)).sent.isEmpty)
        #expect(machine.isFinished && machine.exitError == nil && machine.nextWakeup == nil)
        let result = machine.result
        #expect(
            result?.answer.ack.status == .queued && result?.answer.ack.queueID == 4 && result?.answer.ack.position == 2)
        #expect(
            result?.answer.resolution == .catalogID && result?.answer.trackID == "617154366"
                && result?.answer.picked == nil)
        #expect(result?.attempts == 3 && result?.latencyNs == Nanos.ms(420))
        #expect(result?.station.id == id && result?.answer.libraryMissed == false)
    }

    @Test func wordsTryTheLibraryThenSearchTheCatalogHereAndAskForTheFirstPlayable() {
        var machine = requester(.words("get lucky", pick: 1))
        var station = Fixture.djPeer
        let out = found(&machine, &station)
        #expect(out.catalog.isEmpty, "no search before the DJ's library was asked")
        let library = requests(out)
        #expect(library.map(\.wanted) == [.library("get lucky")])
        let firstID = library[0].requestID

        let searching = machine.handle(ack(&station, firstID, .unknownTrack), at: at(ms: 110))
        #expect(searching.catalog == [.search("get lucky")])
        #expect(requests(searching).isEmpty)
        // Nothing is sent while the catalog is searched.
        #expect(requests(machine.run(until: at(ms: 600), from: at(ms: 110))).isEmpty)
        #expect(!machine.isFinished)

        // Results for another term are not this search's.
        _ = machine.handle(.catalog(.results(term: "other", tracks: catalogTracks)), at: at(ms: 610))
        #expect(machine.request.pending == nil)
        let asked = requests(
            machine.handle(.catalog(.results(term: "get lucky", tracks: catalogTracks)), at: at(ms: 620)))
        #expect(asked.map(\.wanted) == [.catalogID("617154366")])
        let secondID = asked[0].requestID
        #expect(secondID > firstID, "a new request needs a higher ID: the DJ answered the first")
        _ = machine.handle(ack(&station, secondID, .queued), at: at(ms: 625))
        let result = machine.result
        #expect(result?.answer.resolution == .search && result?.answer.libraryMissed == true)
        #expect(result?.answer.picked?.id == "617154366" && result?.answer.trackID == "617154366")
        #expect(result?.latencyNs == Nanos.ms(5))
    }

    @Test func wordsTheLibraryHasAreAnsweredWithoutTheCatalog() {
        var machine = requester(.words("one more", pick: 1))
        var station = Fixture.djPeer
        let sent = requests(found(&machine, &station))
        let out = machine.handle(ack(&station, sent[0].requestID, .queued), at: at(ms: 110))
        #expect(out.catalog.isEmpty)
        #expect(machine.result?.answer.resolution == .library && machine.result?.answer.trackID == nil)
    }

    @Test func aRefusalOtherThanUnknownIsTheAnswerAndLibraryOnlyNeverSearches() {
        for status in [RequestAck.Status.requestsOff, .overLimit, .muted, .unavailable] {
            var machine = requester(.words("x", pick: 1))
            var station = Fixture.djPeer
            let sent = requests(found(&machine, &station))
            let out = machine.handle(ack(&station, sent[0].requestID, status), at: at(ms: 110))
            #expect(out.catalog.isEmpty, "\(status)")
            #expect(machine.isFinished && machine.exitError == nil && machine.result?.answer.ack.status == status)
        }
        var library = requester(.library("nothing like it"))
        var station = Fixture.djPeer
        let sent = requests(found(&library, &station))
        let out = library.handle(ack(&station, sent[0].requestID, .unknownTrack), at: at(ms: 110))
        #expect(out.catalog.isEmpty)
        #expect(library.result?.answer.ack.status == .unknownTrack && library.result?.answer.resolution == .library)
    }

    @Test func anExplicitSearchStartsAtOnceAndPicks() {
        var machine = requester(.search("daft punk", pick: 2))
        var station = Fixture.djPeer
        // The search runs while the station is looked for.
        let start = machine.handle(.start, at: t0)
        #expect(start.catalog == [.search("daft punk")] && start.browses == 1)
        _ = machine.handle(.catalog(.results(term: "daft punk", tracks: catalogTracks)), at: at(ms: 10))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        let snapshot = Fixture.snapshot(dj: DJTime(ns: 5))
        let sent = requests(machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100)))
        #expect(sent.map(\.wanted) == [.catalogID("697195462")])
        _ = machine.handle(ack(&station, sent[0].requestID, .awaitingApproval), at: at(ms: 110))
        #expect(machine.result?.answer.resolution == .search && machine.result?.answer.libraryMissed == false)
        #expect(machine.result?.answer.picked?.title == "One More Time")
    }

    @Test func searchesThatFindNothingFailOrPickTooFarEndClearly() {
        var empty = requester(.words("zzz", pick: 1))
        var station = Fixture.djPeer
        let sent = requests(found(&empty, &station))
        _ = empty.handle(ack(&station, sent[0].requestID, .unknownTrack), at: at(ms: 110))
        _ = empty.handle(.catalog(.results(term: "zzz", tracks: [])), at: at(ms: 200))
        #expect(empty.isFinished && empty.exitError?.code == .refused)
        #expect(empty.exitError?.description.contains("No title in the DJ's library matches 'zzz'") == true)

        var far = requester(.search("daft punk", pick: 3))
        _ = far.handle(.start, at: t0)
        _ = far.handle(.catalog(.results(term: "daft punk", tracks: catalogTracks)), at: at(ms: 10))
        #expect(far.isFinished && far.exitError?.code == .usage && far.exitError?.exitCode == 2)
        #expect(far.exitError?.description.contains("pick one of 1–2") == true)

        var failing = requester(.search("daft punk", pick: 1))
        _ = failing.handle(.start, at: t0)
        _ = failing.handle(
            .catalog(.tracks([], failure: "The search for 'daft punk' failed: timed out")), at: at(ms: 10))
        #expect(failing.isFinished && failing.exitError?.code == .catalog)
        #expect(failing.exitError?.description.contains("failed: timed out") == true)
    }

    @Test func aCatalogThatNeverAnswersEndsAtTheTimeout() {
        var machine = requester(.search("slow", pick: 1), timeoutMs: 1_000)
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        let out = machine.run(until: at(ms: 1_000), from: at(ms: 100))
        #expect(requests(out).isEmpty)
        #expect(machine.isFinished && machine.exitError?.code == .catalog)
    }

    @Test func noAnswerWithinTheTimeoutIsNotFound() {
        var machine = requester(.catalogID("1"), timeoutMs: 1_000)
        var station = Fixture.djPeer
        var sent = requests(found(&machine, &station)).count
        sent += requests(machine.run(until: at(ms: 1_000), from: at(ms: 100))).count
        #expect(sent == 5)  // 100, 300, 500, 700, 900 ms
        #expect(machine.isFinished && machine.exitError?.code == .notFound)
        #expect(machine.exitError?.description.contains("did not acknowledge the request") == true)
    }

    @Test func answersFromAnImpostorAreDropped() {
        var machine = requester(.catalogID("1"))
        var station = Fixture.djPeer
        var impostor = Peer("10.0.0.66", key: 0x66)
        let sent = requests(found(&machine, &station))
        _ = machine.handle(ack(&impostor, sent[0].requestID, .queued), at: at(ms: 110))
        #expect(!machine.isFinished && machine.filter.drops.counts == ["bad_signature": 1])
    }

    // MARK: queue

    @Test func theQueueReaderAsksUntilTheListComes() {
        var machine = GuestExchange(
            GuestQueueRead(), station: "Rooftop", timeoutNs: Nanos.ms(3_000), interfaceName: "eth0",
            verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        let out = found(&machine, &station)
        #expect(out.sent.last?.message.tag == "query" && out.sent.last?.to == toDJ)
        #expect(machine.run(until: at(ms: 300), from: at(ms: 100)).messages.map(\.tag) == ["query"])
        // The roster and snapshot of the answer are not the list.
        _ = machine.handle(station.send(.roster(Roster(total: 0, entries: [])), station: id), at: at(ms: 310))
        #expect(!machine.isFinished)
        let list = QueueList(
            mode: .approve, total: 1,
            entries: [
                QueueList.Entry(
                    queueID: 3, trackID: "t1", title: "Second", artist: "B", requester: "Bob",
                    tally: Tally(up: 2, down: 1), awaitingApproval: true)
            ])
        _ = machine.handle(station.send(.queueList(list), station: id), at: at(ms: 320))
        #expect(machine.isFinished && machine.exitError == nil)
        #expect(machine.result?.answer == list && machine.result?.attempts == 2)
        #expect(machine.result?.latencyNs == Nanos.ms(220))
    }

    @Test func theQueueReaderTimesOut() {
        var machine = GuestExchange(
            GuestQueueRead(), station: "Rooftop", timeoutNs: Nanos.ms(500), interfaceName: "eth0",
            verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        _ = found(&machine, &station)
        _ = machine.run(until: at(ms: 500), from: at(ms: 100))
        #expect(machine.isFinished && machine.exitError?.code == .notFound)
    }

    // MARK: vote --request

    @Test func aRequestVoteIsRetriedUntilTheAnswerForThatRequest() {
        var machine = GuestExchange(
            GuestRequestVote(RequestVote(queueID: 7, choice: .up)), station: "Rooftop", timeoutNs: Nanos.ms(3_000),
            interfaceName: "eth0", verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        let out = found(&machine, &station)
        #expect(
            out.messages.compactMap { if case .requestVote(let v) = $0 { v } else { nil } } == [
                RequestVote(queueID: 7, choice: .up)
            ])
        #expect(machine.run(until: at(ms: 300), from: at(ms: 100)).messages.map(\.tag) == ["requestVote"])
        let other = RequestVoteAck(voteSequence: 1, queueID: 8, status: .counted)
        _ = machine.handle(station.send(.requestVoteAck(other), station: id), at: at(ms: 310))
        #expect(!machine.isFinished)
        let played = RequestVoteAck(voteSequence: 2, queueID: 7, status: .played)
        _ = machine.handle(station.send(.requestVoteAck(played), station: id), at: at(ms: 320))
        #expect(machine.isFinished && machine.exitError == nil)
        #expect(machine.result?.answer.status == .played && machine.result?.attempts == 2)
    }

    // MARK: The DJ's side of the conversation

    /// The requester's datagrams go to a real DJ machine and its answers come back: the whole
    /// exchange, pure.
    @Test func aRequesterAndTheDJMachineAgree() {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        var guest = Peer("10.0.0.9", key: 9)
        var machine = requester(.words("third", pick: 1))
        var station = Fixture.djPeer
        var out = found(&machine, &station)
        var now = at(ms: 100)
        for _ in 0..<5 where !machine.isFinished {
            for send in out.sent where send.to == toDJ {
                let answers = dj.handle(guest.send(send.message, station: id), at: now)
                for answer in answers.sent where answer.to == .peer(guest.address) {
                    out = machine.handle(station.send(answer.message, station: id), at: now)
                }
            }
            now = now + Nanos.ms(1)
        }
        #expect(machine.result?.answer.ack.status == .queued)
        #expect(machine.result?.answer.ack.title == "Third" && machine.result?.answer.ack.position == 1)
        #expect(dj.upNext.entries.first?.requester == "Bob" && dj.upNext.entries.first?.trackID == "t2")
    }
}
