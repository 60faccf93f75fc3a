import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The DJ machine driven input by input at explicit instants: no sockets, no clock.
@Suite struct DJMachineTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)

    func started(queue: [Track] = Fixture.tracks, playsAudio: Bool = true) -> DJMachine {
        Fixture.startedDJ(queue: queue, playsAudio: playsAudio)
    }

    func acks(_ effects: [Effect], to peer: Peer) -> [VoteAck] {
        effects.sent.compactMap {
            if case .voteAck(let ack) = $0.message, $0.to == .peer(peer.address) { ack } else { nil }
        }
    }

    @Test func startReportsPublishesAndAnnouncesTheFirstTrack() {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        #expect(dj.nextWakeup == nil)
        let out = dj.handle(.start, at: t0)

        let first = out.reports.first
        guard
            case .stationStarted(
                let name, let stationID, let interface, let address, let port, let group, _, let queue, _) = first
        else {
            Issue.record("the first report is not stationStarted: \(out.reportTags)")
            return
        }
        #expect(name == "Rooftop" && stationID == id && interface == "eth0" && address == "10.0.0.1")
        #expect(port == 40_000 && group == Fixture.group && queue == 3)
        #expect(out.publishes.map(\.name) == ["Rooftop"])
        #expect(out.publishes.first?.port == 40_000)
        #expect(out.publishes.first?.txt == Fixture.advert.txtRecord)

        let snapshots = out.snapshots(to: self.group)
        #expect(snapshots.count == 1)
        #expect(snapshots.first?.nowPlaying == Fixture.tracks[0])
        #expect(snapshots.first?.anchor == .playing(at: 0, djTime: DJTime(onTheDJ: t0)))
        #expect(snapshots.first?.sentAtNs == t0.ns)
        #expect(out.sent.allSatisfy { $0.station == id })
        #expect(out.follows.count == 1 && out.follows.first?.isDJ == true)
        #expect(out.player == [.load(Fixture.tracks[0], paused: false)])
        #expect(out.stateChanges == [.track])
        #expect(dj.nextWakeup == t0 + DJMachine.expiryIntervalNs)
    }

    @Test func helloFromANewListenerIsAnsweredAndCountedOnce() {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        let out = dj.handle(guest.send(.hello(Hello(listenerName: "kitchen")), station: id), at: at(ms: 100))

        #expect(out.snapshots(to: .peer(guest.address)).map(\.listenerCount) == [1])
        #expect(out.reports.filter { $0.tag == "listenersChanged" }.map(\.brief) == ["listeners 1 +kitchen"])
        #expect(out.snapshots(to: group).map(\.listenerCount) == [1])
        #expect(out.stateChanges == [.listeners])

        // The same listener again (a retried hello): answered, not counted again.
        let again = dj.handle(guest.send(.hello(Hello(listenerName: "kitchen")), station: id), at: at(ms: 400))
        #expect(again.snapshots(to: .peer(guest.address)).count == 1)
        #expect(!again.reportTags.contains("listenersChanged"))
        #expect(dj.engine.roster.count == 1)

        // A listener without a name shows as its key's fingerprint.
        var anonymous = Peer("10.0.0.9", key: 9)
        let third = dj.handle(anonymous.send(.hello(Hello(listenerName: "")), station: id), at: at(ms: 450))
        #expect(third.reports.map(\.brief).contains("listeners 2 +\(anonymous.publicKey.fingerprint)"))
    }

    @Test(
        "a repeated hello from a listener in the list gets no snapshot of its own; from one the DJ does not know, it does"
    )
    func aRepeatedHelloFromAKnownListenerIsNotAnswered() throws {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        _ = dj.handle(guest.send(.hello(Hello(listenerName: "kitchen")), station: id), at: at(ms: 100))
        let repeated = dj.handle(
            guest.send(.hello(Hello(listenerName: "kitchen", isRepeat: true)), station: id), at: at(ms: 5_100))
        #expect(repeated.snapshots(to: .peer(guest.address)).isEmpty)
        #expect(dj.engine.roster.count == 1)
        // Renamed in it: the list changes all the same.
        let renamed = dj.handle(
            guest.send(.hello(Hello(listenerName: "garden", isRepeat: true)), station: id), at: at(ms: 5_200))
        #expect(renamed.snapshots(to: group).map(\.listenerCount) == [1])
        #expect(dj.engine.roster.entries[guest.publicKey]?.name == "garden")

        // A DJ that restarted does not know it: it answers, and counts it.
        var fresh = started()
        let restarted = fresh.handle(
            guest.send(.hello(Hello(listenerName: "kitchen", isRepeat: true)), station: id), at: at(ms: 5_300))
        #expect(restarted.snapshots(to: .peer(guest.address)).count == 1)
        #expect(fresh.engine.roster.count == 1)

        // On the wire: a hello's flags bit 2, before the cookie; a heartbeat ignores it.
        var hello = ByteWriter()
        Hello(listenerName: "a", isRepeat: true).encode(into: &hello)
        #expect(hello.bytes == [1, 0x61, 4])
        hello = ByteWriter()
        Hello(listenerName: "a", wantsUnicast: true, cookie: 9, isRepeat: true).encode(into: &hello)
        #expect(hello.bytes == [1, 0x61, 5, 0, 0, 0, 0, 0, 0, 0, 9])
        var reader = ByteReader(hello.bytes)
        #expect(try Hello(from: &reader) == Hello(listenerName: "a", wantsUnicast: true, cookie: 9, isRepeat: true))
        reader = ByteReader([4])
        #expect(try Heartbeat(from: &reader) == Heartbeat())
    }

    @Test func voteIsAckedAndCountedAndItsReplayDropped() {
        var dj = started()
        var voter = Peer("10.0.0.8", key: 8)
        let bytes = voter.bytes(.vote(Vote(trackID: "t0", choice: .up)), station: id)

        let out = dj.handle(.datagram(bytes, from: voter.address), at: at(ms: 100))
        let ack = acks(out, to: voter)
        #expect(ack.count == 1)
        #expect(ack.first?.status == .counted && ack.first?.trackID == "t0" && ack.first?.choice == .up)
        #expect(ack.first?.tally == Tally(up: 1, down: 0))
        #expect(ack.first?.voteSequence == voter.sequence)
        #expect(out.reports.filter { $0.tag == "voteCounted" }.map(\.brief) == ["vote t0 up 1/0"])
        #expect(out.snapshots(to: group).map(\.tally) == [Tally(up: 1, down: 0)])

        // The very same datagram again: a replay, dropped and counted, not answered.
        let replay = dj.handle(.datagram(bytes, from: voter.address), at: at(ms: 150))
        #expect(replay.sent.isEmpty && replay.reports.isEmpty)
        #expect(dj.filter.drops.counts == ["replayed": 1])

        // A retry (a new datagram of the same vote) is acked again and changes nothing.
        let retry = dj.handle(voter.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 200))
        #expect(acks(retry, to: voter).map(\.tally) == [Tally(up: 1, down: 0)])
        #expect(!retry.reportTags.contains("voteCounted"))
        #expect(dj.engine.votes.tally == Tally(up: 1, down: 0))
    }

    /// The datagrams of one wake-up are one batch: every vote is acknowledged, the group gets one
    /// snapshot with the tally after all of them, and one save comes before everything.
    @Test func aBatchOfVotesIsAckedVoteByVoteAndToldInOneSnapshot() {
        var dj = started()
        var voters = (0..<40).map { Peer("10.0.1.\($0)", key: UInt8(100 + $0)) }
        var batch: [(NodeInput, LocalTime)] = []
        for index in voters.indices {
            let choice: VoteChoice = index % 4 == 0 ? .down : .up
            batch.append((voters[index].send(.vote(Vote(trackID: "t0", choice: choice)), station: id), at(ms: 100)))
        }
        // A replay inside the batch is dropped; a retry of a vote is acknowledged again.
        batch.append((batch[3].0, at(ms: 101)))
        batch.append((voters[5].send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at(ms: 102)))
        let out = dj.handle(batch: batch)
        for (index, voter) in voters.enumerated() {
            #expect(acks(out, to: voter).count == (index == 5 ? 2 : 1))
            #expect(acks(out, to: voter).allSatisfy { $0.status == .counted })
        }
        #expect(out.reportTags.filter { $0 == "voteCounted" }.count == 40)
        #expect(out.snapshots(to: group).map(\.tally) == [Tally(up: 30, down: 10)])
        #expect(dj.engine.votes.tally == Tally(up: 30, down: 10))
        #expect(dj.filter.drops.counts == ["replayed": 1])
        let saves = out.indices.filter { if case .save = out[$0] { true } else { false } }
        #expect(saves == [0])
        if case .save(let station) = out.first { #expect(station.votes.tally == Tally(up: 30, down: 10)) }
        // The same votes one input at a time: a snapshot each, as before batches.
        var single = started()
        var snapshots = 0
        for (input, instant) in batch { snapshots += single.handle(input, at: instant).snapshots(to: group).count }
        #expect(snapshots == 40 && single.engine.votes.tally == dj.engine.votes.tally)
    }

    @Test func voteForAStaleTrackIsAckedAsSuchAndNotCounted() {
        var dj = started()
        var voter = Peer("10.0.0.8", key: 8)
        let out = dj.handle(voter.send(.vote(Vote(trackID: "t1", choice: .down)), station: id), at: at(ms: 100))
        let ack = acks(out, to: voter)
        #expect(ack.map(\.status) == [.staleTrack])
        #expect(ack.first?.trackID == "t0")  // what plays now, so the voter can retarget
        #expect(ack.first?.tally == Tally())
        #expect(!out.reportTags.contains("voteCounted"))
        #expect(out.snapshots(to: group).isEmpty)
        #expect(dj.engine.votes.tally == Tally())
    }

    @Test func timePingIsAnsweredWithTheReceiveInstant() {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        let now = at(ms: 123)
        let out = dj.handle(guest.send(.timePing(TimePing(clientSendNs: 42)), station: id), at: now)
        let pongs = out.sent.compactMap { if case .timePong(let pong) = $0.message { (pong, $0.to) } else { nil } }
        #expect(pongs.count == 1)
        #expect(pongs.first?.1 == .peer(guest.address))
        // With the pinger's return cookie at its address (for unicast copies).
        let cookie = dj.unicastListeners.cookie(for: guest.publicKey, at: guest.address, now: now)
        #expect(
            pongs.first?.0 == TimePong(clientSendNs: 42, serverReceiveNs: now.ns, serverSendNs: now.ns, cookie: cookie))
        #expect(dj.engine.roster.count == 0)  // a ping is not a join
    }

    @Test func queryIsAnsweredWithASnapshotToTheAsker() {
        var dj = started()
        var observer = Peer("10.0.0.30", key: 30)
        let out = dj.handle(observer.send(.query(Query()), station: id), at: at(ms: 100))
        #expect(out.snapshots(to: .peer(observer.address)).count == 1)
        #expect(dj.engine.roster.count == 0)
    }

    @Test func trackEndsAtItsDurationAndTheNextStartsWithZeroTally() {
        var dj = started()
        var voter = Peer("10.0.0.8", key: 8)
        _ = dj.handle(voter.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 1_000))
        let before = dj.run(until: at(ms: 9_999), from: at(ms: 1_000))
        #expect(!before.stateChanges.contains(.track))
        #expect(dj.nextWakeup == at(ms: 10_000))

        let out = dj.handle(.timer, at: at(ms: 10_000))
        #expect(out.stateChanges.first == .track)
        let snapshot = out.snapshots(to: group).first
        #expect(snapshot?.nowPlaying == Fixture.tracks[1])
        #expect(snapshot?.tally == Tally())
        #expect(snapshot?.queueIndex == 1)
        #expect(snapshot?.anchor == .playing(at: 0, djTime: DJTime(onTheDJ: at(ms: 10_000))))
        #expect(out.player == [.load(Fixture.tracks[1], paused: false)])
        #expect(dj.engine.votes.tally == Tally())
        // The vote for the old track is stale now.
        let late = dj.handle(voter.send(.vote(Vote(trackID: "t0", choice: .up)), station: id), at: at(ms: 10_100))
        #expect(acks(late, to: voter).map(\.status) == [.staleTrack])
    }

    @Test func aTrackChangeIsSentTwiceMoreSoonAgainstLoss() {
        var dj = started()
        _ = dj.run(until: at(ms: 9_999), from: at(ms: 0))
        let change = dj.handle(.timer, at: at(ms: 10_000))
        #expect(change.snapshots(to: group).map(\.nowPlaying) == [Fixture.tracks[1]])
        #expect(dj.nextWakeup == at(ms: 10_000) + DJMachine.snapshotRepeatIntervalNs)
        let first = dj.handle(.timer, at: at(ms: 10_100))
        let second = dj.handle(.timer, at: at(ms: 10_200))
        for repeated in [first, second] {
            #expect(repeated.snapshots(to: group).map(\.nowPlaying) == [Fixture.tracks[1]])
            #expect(repeated.reports.isEmpty && repeated.player.isEmpty, "a repeat is only the datagram")
        }
        #expect(dj.handle(.timer, at: at(ms: 10_300)).snapshots(to: group).isEmpty, "two repeats, no more")
        #expect(dj.nextWakeup.map { $0 > at(ms: 10_300) } == true)
    }

    @Test func aLateTimerStartsTheNextTrackWhereItWouldBeByNow() {
        var dj = started()
        let out = dj.handle(.timer, at: at(ms: 10_300))
        let snapshot = out.snapshots(to: group).first
        #expect(snapshot?.nowPlaying?.id == "t1")
        #expect(snapshot?.anchor == .playing(at: Nanos.ms(300), djTime: DJTime(onTheDJ: at(ms: 10_300))))
        #expect(dj.nextWakeup.map { $0 > at(ms: 10_300) } == true)
    }

    @Test
    func aTimerAfterSeveralTracksCatchesUpInOneStep() {
        // Track 0 ends at 10 s, track 1 at 30 s; the DJ is next woken at 45 s (a stalled runtime,
        // a suspended laptop). By then track 2 has played 15 s.
        var dj = started()
        let now = at(ms: 45_000)
        let out = dj.handle(.timer, at: now)
        let snapshot = out.snapshots(to: group).first
        #expect(
            snapshot.map { $0.anchor.positionNs <= Int64($0.nowPlaying?.durationMs ?? 0) * Nanos.perMillisecond }
                == true)
        #expect(snapshot?.nowPlaying?.id == "t2")
        #expect(
            dj.nextWakeup.map { $0 >= now } == true, "nextWakeup \(String(describing: dj.nextWakeup)) is before now")
    }

    @Test func transportCommandsMoveTheStationAndThePlayer() {
        var dj = started()
        let pause = dj.handle(.control("pause"), at: at(ms: 2_000))
        #expect(pause.stateChanges == [.paused])
        #expect(pause.player == [.pause])
        #expect(dj.engine.anchor == .paused(at: Nanos.ms(2_000), djTime: DJTime(onTheDJ: at(ms: 2_000))))
        #expect(dj.handle(.control("pause"), at: at(ms: 2_100)).stateChanges.isEmpty)  // already paused

        let resume = dj.handle(.control("resume"), at: at(ms: 5_000))
        #expect(resume.stateChanges == [.resumed])
        #expect(resume.player == [.resume])
        #expect(dj.engine.positionNs(at: DJTime(onTheDJ: at(ms: 6_000))) == Nanos.ms(3_000))

        let seek = dj.handle(.control("seek 7.5"), at: at(ms: 6_000))
        #expect(seek.stateChanges == [.seek])
        #expect(seek.player == [.resume])  // start again from the moved anchor
        #expect(dj.engine.anchor == .playing(at: Nanos.ms(7_500), djTime: DJTime(onTheDJ: at(ms: 6_000))))

        let next = dj.handle(.control("next"), at: at(ms: 6_500))
        #expect(next.stateChanges == [.track])
        #expect(next.player == [.load(Fixture.tracks[1], paused: false)])

        let toggle = dj.handle(.control("toggle"), at: at(ms: 7_000))
        #expect(toggle.stateChanges == [.paused])
        let prev = dj.handle(.control("prev"), at: at(ms: 7_500))
        #expect(prev.stateChanges == [.track])
        #expect(prev.player == [.load(Fixture.tracks[0], paused: true)])  // keeps the pause
        #expect(dj.engine.index == 0 && dj.engine.isPaused)
        #expect(dj.handle(.control("  Toggle  "), at: at(ms: 7_600)).stateChanges == [.resumed])
    }

    @Test func badLinesAreRefusedBeforeTheMachineAndCatalogCommandsAsk() {
        var dj = started()
        let now = at(ms: 100)
        // What the DJ reads instead is DJControlTests' business; the machine never sees these.
        for line in ["seek", "seek soon", "seek nan", "dance", "add", "search", ""] {
            #expect(throws: ControlError.self, "'\(line)'") { try DJControl.parse(line: line) }
        }
        #expect(dj.handle(.control("search daft punk"), at: now).catalog == [.search("daft punk")])
        #expect(dj.handle(.control("add 1440857781, 42 7"), at: now).catalog == [.lookup(["1440857781", "42", "7"])])
        #expect(dj.engine.anchor == .playing(at: 0, djTime: DJTime(onTheDJ: t0)))  // nothing moved
    }

    @Test func catalogAnswersAreReportedAndQueued() {
        var dj = started()
        let found = [Track(id: "c1", title: "Found", artist: "X", album: "", durationMs: 5_000, source: "http://c/1")]
        let results = dj.handle(.catalog(.results(term: "daft", tracks: found)), at: at(ms: 100))
        #expect(results.reports.map(\.brief) == ["results daft 1"])

        let added = dj.handle(.catalog(.tracks(found, failure: "1 ID not found")), at: at(ms: 200))
        #expect(added.warnings == ["1 ID not found"])
        #expect(added.reports.map(\.brief).contains("queued 1 of 4"))
        #expect(added.stateChanges == [.queue])
        #expect(added.snapshots(to: group).map(\.queueLength) == [4])
        #expect(added.player.isEmpty)  // the playing track is untouched

        let nothing = dj.handle(.catalog(.tracks([], failure: "nothing found")), at: at(ms: 300))
        #expect(nothing.warnings == ["nothing found"])
        #expect(!nothing.reportTags.contains("queued"))
    }

    @Test func anEmptyStationStartsPlayingWhatIsAdded() {
        var dj = DJMachine(
            configuration: Fixture.djConfiguration(queue: []), verifier: ChecksumVerifier(), now: t0)
        let start = dj.handle(.start, at: t0)
        #expect(start.snapshots(to: group).first.map { $0.nowPlaying == nil } == true)
        #expect(start.player.isEmpty)
        #expect(dj.handle(.control("pause"), at: at(ms: 50)).stateChanges.isEmpty)

        let added = dj.handle(.catalog(.tracks([Fixture.tracks[2]], failure: nil)), at: at(ms: 100))
        #expect(added.stateChanges == [.track])
        #expect(added.player == [.load(Fixture.tracks[2], paused: false)])
        #expect(dj.engine.anchor == .playing(at: 0, djTime: DJTime(onTheDJ: at(ms: 100))))
    }

    @Test func silentListenersExpireAfterTheRosterTimeout() {
        var dj = started()
        var quiet = Peer("10.0.0.7", key: 7)
        var chatty = Peer("10.0.0.8", key: 8)
        _ = dj.handle(quiet.send(.hello(Hello(listenerName: "quiet")), station: id), at: at(ms: 1_000))
        _ = dj.handle(chatty.send(.hello(Hello(listenerName: "chatty")), station: id), at: at(ms: 1_000))
        var out = dj.run(until: at(ms: 3_000), from: at(ms: 1_000))
        out += dj.handle(chatty.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 3_000))
        out += dj.run(until: at(ms: 4_000), from: at(ms: 3_000))
        out += dj.handle(chatty.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 4_000))
        out += dj.run(until: at(ms: 4_500), from: at(ms: 4_000))
        #expect(dj.engine.roster.count == 2)  // 3.5 s of silence is still within the timeout
        #expect(!out.reportTags.contains("listenersChanged"))

        let expiry = dj.run(until: at(ms: 5_000), from: at(ms: 4_500))
        #expect(expiry.reports.filter { $0.tag == "listenersChanged" }.map(\.brief) == ["listeners 1 left"])
        #expect(expiry.stateChanges.contains(.listeners))
        #expect(dj.engine.roster.entries.keys.map(\.self) == [chatty.publicKey])
    }

    @Test func leaveAndAnUnknownHeartbeatChangeTheRoster() {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        // A heartbeat from a listener the DJ does not know (its hello was lost) is a join.
        let join = dj.handle(guest.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 100))
        #expect(
            join.reports.filter { $0.tag == "listenersChanged" }.map(\.brief)
                == ["listeners 1 +\(guest.publicKey.fingerprint)"])
        let leave = dj.handle(guest.send(.leave(Leave()), station: id), at: at(ms: 200))
        #expect(leave.reports.filter { $0.tag == "listenersChanged" }.map(\.brief) == ["listeners 0 left"])
        #expect(leave.snapshots(to: group).map(\.listenerCount) == [0])
        let again = dj.handle(guest.send(.leave(Leave()), station: id), at: at(ms: 300))
        #expect(!again.reportTags.contains("listenersChanged"))
    }

    @Test func quitSaysGoodbyeToTheGroupAndRecentPeersAndFinishes() {
        var dj = started()
        var longGone = Peer("10.0.0.7", key: 7)
        var recent = Peer("10.0.0.8", key: 8)
        _ = dj.handle(longGone.send(.hello(Hello(listenerName: "a")), station: id), at: at(ms: 1_000))
        _ = dj.handle(recent.send(.timePing(TimePing(clientSendNs: 1)), station: id), at: at(ms: 3_000))
        _ = dj.handle(.datagram([1, 2, 3], from: recent.address), at: at(ms: 3_100))  // one drop, for the report

        let out = dj.handle(.quit, at: at(ms: 6_500))
        let goodbyes = out.sent.filter { $0.message.tag == "goodbye" }
        #expect(goodbyes.count == out.sent.count)
        #expect(goodbyes.filter { $0.to == group }.count == 3)
        #expect(goodbyes.filter { $0.to != group }.map(\.to) == [.peer(recent.address)])
        #expect(out.player == [.stop])
        #expect(out.reports.last?.brief == "stopped Rooftop dropped 1")
        #expect(dj.isFinished && dj.exitError == nil && dj.nextWakeup == nil)
        #expect(dj.handle(.timer, at: at(ms: 7_000)).isEmpty)
        #expect(dj.handle(.control("next"), at: at(ms: 7_000)).isEmpty)
    }

    @Test func quitCommandEndsTheStationToo() {
        var dj = started(playsAudio: false)
        let out = dj.handle(.control("q"), at: at(ms: 100))
        #expect(out.sent.filter { $0.message.tag == "goodbye" && $0.to == group }.count == 3)
        #expect(out.player.isEmpty)  // it never played
        #expect(dj.isFinished)
    }

    @Test func discoveryFailureFinishesWithADiscoveryError() {
        var dj = started()
        let out = dj.handle(.discovery(.failed("avahi-daemon is not running")), at: at(ms: 100))
        #expect(dj.isFinished)
        #expect(dj.exitError?.code == .discovery)
        #expect(dj.exitError?.description == "avahi-daemon is not running")
        #expect(dj.exitError?.exitCode == 1)
        #expect(out.sent.filter { $0.message.tag == "goodbye" && $0.to == group }.count == 3)
        #expect(out.reportTags.last == "stationStopped")
    }

    @Test func publicationAndRenameAreReported() {
        var dj = started()
        let published = dj.handle(.discovery(.published(name: "Rooftop")), at: at(ms: 100))
        #expect(published.reports.map(\.brief) == ["published Rooftop"])
        let renamed = dj.handle(.discovery(.renamed(from: "Rooftop", to: "Rooftop #2")), at: at(ms: 200))
        #expect(renamed.reports.first?.brief == "renamed Rooftop → Rooftop #2")
        #expect(renamed.snapshots(to: group).map(\.stationName) == ["Rooftop #2"])
        // Other stations' DNS-SD traffic is none of the DJ's business.
        #expect(dj.handle(OtherStation.resolved, at: at(ms: 210)).isEmpty)
    }

    @Test func unsignedForgedForeignAndMalformedDatagramsAreDroppedByReason() {
        var dj = started()
        var guest = Peer("10.0.0.7", key: 7)
        let hello = Message.hello(Hello(listenerName: "x"))

        var unsigned = guest.bytes(hello, station: id)
        unsigned.replaceSubrange((unsigned.count - 64)..., with: [UInt8](repeating: 0, count: 64))
        let forged = try! Datagram.encode(
            hello, stationID: id, sequence: 5, signer: ForgingSigner(publicKey: testKey(7), realKey: testKey(66)))
        var tampered = guest.bytes(hello, station: id)
        tampered[MessageHeader.size + 1] ^= 0x20
        let foreign = guest.bytes(hello, station: Fixture.otherStationID)
        let impostor = guest.bytes(.goodbye(Goodbye(reason: "bye")), station: id)  // a DJ kind from a listener
        let truncated = Array(guest.bytes(hello, station: id).prefix(30))
        let garbage: [UInt8] = [0x00, 0x01, 0x02, 0x03]
        let oversized = [UInt8](repeating: 0x50, count: Datagram.maxSize + 1)

        var out: [Effect] = []
        for bytes in [unsigned, forged, tampered, foreign, impostor, truncated, garbage, oversized] {
            out += dj.handle(.datagram(bytes, from: guest.address), at: at(ms: 100))
        }
        #expect(out.sent.isEmpty && out.reports.isEmpty)
        #expect(dj.engine.roster.count == 0)
        #expect(
            dj.filter.drops.counts == [
                "bad_signature": 3, "wrong_station": 1, "unexpected_sender": 1, "truncated": 1, "bad_magic": 1,
                "oversized": 1,
            ])
        // The honest datagram still gets through after all that.
        let honest = dj.handle(guest.send(hello, station: id), at: at(ms: 200))
        #expect(honest.reports.map(\.brief).contains("listeners 1 +x"))
    }

    @Test func playerFailureIsWarnedAndRetried() {
        var dj = started()
        let failed = dj.handle(.playerFailed("no such file"), at: at(ms: 100))
        #expect(failed.warnings.count == 1)
        #expect(failed.player.isEmpty)
        #expect(dj.nextWakeup.map { $0 <= at(ms: 1_100) } == true)
        let retried = dj.run(until: at(ms: 1_100), from: at(ms: 100)).player
        #expect(retried == [.load(Fixture.tracks[0], paused: false)])
    }

    @Test
    func playerFailureIsRetriedOnlyAfterASecond() {
        var dj = started()
        _ = dj.handle(.playerFailed("no such file"), at: at(ms: 100))
        var loads: [Int64] = []
        var now = at(ms: 100)
        while let wake = dj.nextWakeup, wake <= at(ms: 1_500), wake > now {
            now = wake
            if !dj.handle(.timer, at: now).player.isEmpty { loads.append((now - t0) / Nanos.perMillisecond) }
        }
        #expect(loads == [1_100])  // PlaybackPlanner.retryAfterErrorNs after the failure, not at the 500 ms snapshot
    }

    @Test
    func nothingFollowsTheGoodbyes() {
        var dj = started()
        // 1.2 s since the last snapshot: the periodic one is due when the quit arrives.
        let out = dj.handle(.control("quit"), at: at(ms: 1_200))
        let lastGoodbye = out.lastIndex { if case .send(.goodbye, _, _) = $0 { true } else { false } }
        let lastSnapshot = out.lastIndex { if case .send(.stateSnapshot, _, _) = $0 { true } else { false } }
        #expect(lastGoodbye != nil)
        #expect(lastSnapshot == nil, "a snapshot was sent after going off air")
        #expect(out.reportTags.last == "stationStopped", "reports: \(out.reportTags)")
    }

    @Test func drivenByItsOwnWakeupsTheDJPlaysThroughTheQueueWithoutSpinning() {
        var dj = started()
        var now = t0
        var trackStarts: [(Int64, String)] = []
        var wakeups = 0
        while now < at(ms: 65_000) {
            guard let wake = dj.nextWakeup else {
                Issue.record("no wakeup while on air")
                return
            }
            #expect(wake > now, "wakeup \(wake) not after \(now)")
            guard wake > now else { return }
            now = wake
            wakeups += 1
            let out = dj.handle(.timer, at: now)
            for snapshot in out.snapshots(to: group) where out.stateChanges.contains(.track) {
                trackStarts.append(((now - t0) / Nanos.perMillisecond, snapshot.nowPlaying?.id ?? "-"))
            }
        }
        #expect(trackStarts.map(\.0) == [10_000, 30_000, 60_000])
        #expect(trackStarts.map(\.1) == ["t1", "t2", "t0"])  // the queue wraps
        #expect(wakeups < 65 * 4 + 10)  // expiry every 250 ms, plus the track ends
    }
}
