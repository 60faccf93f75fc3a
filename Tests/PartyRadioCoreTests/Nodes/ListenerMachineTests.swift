import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The listener machine driven input by input. The DJ's clock reads 5 s ahead of the listener's.
@Suite struct ListenerMachineTests {
    let id = Fixture.stationID
    let toDJ = Destination.peer(Fixture.djAddress)
    static let djAheadNs = Nanos.seconds(5)

    /// The DJ clock when the listener's reads `local`.
    func dj(_ local: LocalTime) -> DJTime { DJTime(ns: local.ns + Self.djAheadNs) }

    func listener(query: String? = "Rooftop", timeoutMs: Int64 = 5_000, playsAudio: Bool = true) -> ListenerMachine {
        ListenerMachine(
            configuration: .init(
                query: query, timeoutNs: Nanos.ms(timeoutMs), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: playsAudio),
            verifier: ChecksumVerifier())
    }

    /// The station's snapshot as the DJ would send it at listener instant `local`: track 0 since 100 ms.
    func snapshot(at local: LocalTime, paused: Bool = false, tally: Tally = Tally()) -> StateSnapshot {
        var s = Fixture.snapshot(dj: dj(at(ms: 100)), paused: paused, tally: tally)
        s.sentAtNs = dj(local).ns
        return s
    }

    /// Started, resolved, and tuned in by the station's snapshot at 100 ms; the returned effects
    /// are those of the snapshot.
    func tunedIn(_ machine: inout ListenerMachine, _ station: inout Peer) -> [Effect] {
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        return machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
    }

    /// A pong to a ping sent at `sent`, `oneWayMs` each way (1 ms: received 2 ms later).
    func pong(_ station: inout Peer, pingAt sent: LocalTime, oneWayMs: Int64 = 1) -> NodeInput {
        station.send(
            .timePong(
                TimePong(
                    clientSendNs: sent.ns, serverReceiveNs: dj(sent + Nanos.ms(oneWayMs)).ns,
                    serverSendNs: dj(sent + Nanos.ms(oneWayMs)).ns)),
            station: id)
    }

    /// Tuned in and fed eight pongs (enough to synchronise); returns the instant of the last.
    func synchronised(_ machine: inout ListenerMachine, _ station: inout Peer) -> (LocalTime, [Effect]) {
        _ = tunedIn(&machine, &station)
        var out: [Effect] = []
        var now = at(ms: 100)
        for n in 0..<8 {
            let sent = at(ms: 100 + Int64(n) * 75)
            now = sent + Nanos.ms(2)
            out += machine.handle(pong(&station, pingAt: sent), at: now)
        }
        return (now, out)
    }

    @Test func startBrowsesAndWaitsUntilTheTimeout() {
        var machine = listener()
        #expect(machine.nextWakeup == nil)
        let out = machine.handle(.start, at: t0)
        #expect(out.count == 1 && out.browses == 1)
        #expect(machine.nextWakeup == t0 + Nanos.ms(5_000))
        #expect(machine.tuned == nil && !machine.isFinished)
    }

    @Test func tunesInOnceTheStationAnswersThenSaysHelloAndPings() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        let resolved = machine.handle(Fixture.resolved(), at: at(ms: 20))
        #expect(resolved.sent.map(\.message.tag) == ["query"])
        #expect(resolved.sent.first?.to == toDJ && resolved.sent.first?.station == id)
        #expect(machine.tuned == nil)  // resolved is not heard

        let out = machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
        #expect(out.joinedGroups == [Fixture.group])
        #expect(out.reports.map(\.brief) == ["tuned in Rooftop"])
        #expect(out.follows.count == 1 && out.follows.first?.estimate == nil)
        // The DJ clock is not known yet: no load, but the station's track is fetched at once.
        #expect(out.player == [.fetch(Fixture.tracks[0].source)])
        #expect(machine.tuned?.station.id == id)
        // Hello and the first ping go out with the tune-in itself, not a timer later.
        #expect(
            out.sent.map(\.message) == [
                .hello(Hello(listenerName: "kitchen")), .timePing(TimePing(clientSendNs: at(ms: 100).ns)),
            ])
        #expect(out.sent.allSatisfy { $0.to == toDJ && $0.station == id })
        #expect(machine.nextWakeup.map { $0 > at(ms: 100) } == true)
        #expect(machine.handle(.timer, at: at(ms: 100)).sent.isEmpty)
    }

    @Test func helloIsRetriedUntilAnsweredThenHeartbeatsFollowEverySecond() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        let unanswered = machine.run(until: at(ms: 750), from: at(ms: 100))
        #expect(unanswered.messages.filter { $0.tag == "hello" }.count == 2)  // 400, 700 ms (100 ms: with the tune-in)

        _ = machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 800))), station: id), at: at(ms: 800))
        let answered = machine.run(until: at(ms: 2_750), from: at(ms: 800))
        #expect(answered.messages.filter { $0.tag == "hello" }.isEmpty)
        #expect(answered.messages.filter { $0.tag == "heartbeat" }.count == 2)  // 1.7 s and 2.7 s
        #expect(answered.messages.filter { $0.tag == "timePing" }.count > 10)  // the joining burst
    }

    @Test func everyFifthBeatIsAHelloSoTheDJLearnsTheName() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        var sent: [Effect] = []
        var t = at(ms: 150)
        while t < at(ms: 6_200) {
            sent += machine.handle(station.send(.stateSnapshot(snapshot(at: t)), station: id), at: t)
            sent += machine.run(until: t + Nanos.ms(500), from: t)
            t += Nanos.ms(500)
        }
        let beats = sent.messages.filter { $0.tag == "hello" || $0.tag == "heartbeat" }.map(\.tag)
        #expect(beats.count >= 5)
        #expect(Array(beats.prefix(5)) == ["heartbeat", "heartbeat", "heartbeat", "heartbeat", "hello"])
        // Said as a repeat: the DJ, which answered the first, need not answer it.
        let hellos = sent.messages.compactMap { if case .hello(let hello) = $0 { hello } else { nil } }
        #expect(!hellos.isEmpty && hellos.allSatisfy(\.isRepeat))
    }

    @Test func eachSkipIsSaidOnceThoughItComesTwiceAndAgainWhenItHappensAgain() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        let notice = Message.trackSkipped(TrackSkipped(trackID: "t0", title: "Zero", reason: .crowd, down: 2, room: 3))
        func said(_ at: LocalTime) -> Int {
            machine.handle(station.send(notice, station: id), at: at).reports.filter { $0.tag == "trackSkipped" }.count
        }
        #expect(said(at(ms: 1_000)) == 1)
        #expect(said(at(ms: 1_001)) == 0)  // the second copy
        #expect(said(at(ms: 60_000)) == 1)  // the queue came round and the crowd skipped it again
    }

    @Test func threeCloseSamplesSynchroniseAndLoadThePlayer() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        // Round trips of 2 ms bound the offset to ±1 ms: the third such sample is enough to play.
        for n in 0..<2 {
            let sent = at(ms: 100 + Int64(n) * 10)
            let out = machine.handle(pong(&station, pingAt: sent), at: sent + Nanos.ms(2))
            #expect(machine.clock.samples.count == n + 1)
            #expect(out.player.isEmpty)
            #expect(out.follows.count == 1 && out.follows.first?.estimate == nil)
        }
        #expect(machine.djTime(at: at(ms: 125)) == nil)

        let now = at(ms: 122)
        let out = machine.handle(pong(&station, pingAt: now - Nanos.ms(2)), at: now)
        #expect(machine.clock.isSynchronized)
        #expect(out.player == [.load(Fixture.tracks[0], paused: false)])
        #expect(out.follows.last?.estimate != nil)
        let offset = machine.djTime(at: now).map { $0 - DJTime(ns: now.ns) }
        #expect(offset.map { abs($0 - Self.djAheadNs) < Nanos.ms(1) } == true, "offset \(String(describing: offset))")
        // The view the player follows puts the station where the DJ has it: 100 ms in at 100 ms.
        let position = machine.view?.stationPosition(at: at(ms: 1_100))
        #expect(position.map { abs($0 - Nanos.ms(1_000)) < Nanos.ms(1) } == true)
    }

    @Test func wideRoundTripsWaitForEightSamples() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        // 3 ms each way: a 6 ms round trip bounds the offset only to ±3 ms, too loose to start on.
        for n in 0..<7 {
            let sent = at(ms: 100 + Int64(n) * 10)
            let out = machine.handle(pong(&station, pingAt: sent, oneWayMs: 3), at: sent + Nanos.ms(6))
            #expect(out.player.isEmpty)
        }
        #expect(!machine.clock.isSynchronized)
        let out = machine.handle(pong(&station, pingAt: at(ms: 170), oneWayMs: 3), at: at(ms: 176))
        #expect(machine.clock.isSynchronized)
        #expect(out.player == [.load(Fixture.tracks[0], paused: false)])
    }

    @Test func pingsComeQuicklyUntilSynchronisedThenInTheBurstsPace() {
        var machine = listener()
        var station = Fixture.djPeer
        let tuned = tunedIn(&machine, &station)
        #expect(tuned.messages.filter { $0.tag == "timePing" }.count == 1)  // with the tune-in, at 100 ms
        // Pings every 10 ms while the DJ has not answered, at most twelve…
        let unanswered = machine.run(until: at(ms: 250), from: at(ms: 100))
        let pings = unanswered.messages.compactMap { if case .timePing(let p) = $0 { p.clientSendNs } else { nil } }
        #expect(pings.count == 11, "\(pings.count) pings")
        #expect(pings.first == at(ms: 110).ns && pings.last == at(ms: 210).ns)
        // …then the burst's 75 ms.
        let burst = machine.run(until: at(ms: 400), from: at(ms: 250))
        #expect(burst.messages.filter { $0.tag == "timePing" }.count == 2)  // 285, and 350 with the progress report

        // Once synchronised (three close samples), the burst's pace at once.
        var fresh = listener()
        var dj = Fixture.djPeer
        _ = tunedIn(&fresh, &dj)
        var now = at(ms: 100)
        for _ in 0..<3 {
            _ = fresh.handle(pong(&dj, pingAt: now), at: now + Nanos.ms(2))
            now += Nanos.ms(10)
            _ = fresh.run(until: now, from: now - Nanos.ms(10))
        }
        #expect(fresh.clock.isSynchronized)
        let after = fresh.run(until: now + Nanos.ms(100), from: now)
        #expect(after.messages.filter { $0.tag == "timePing" }.count == 1)  // 75 ms after the last, not 10
    }

    @Test(
        "Once settled, the heartbeat and the pings ride on the progress report's wake-ups, whatever the snapshots' phase",
        arguments: [37, 137, 237, 391, 463] as [Int64])
    func periodicWorkRidesOnProgress(snapshotPhaseMs: Int64) {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        // A loop as the runtime's: each timer wake-up comes 0.3 ms after the instant asked for (a
        // real wait never ends exactly on time), each ping is answered 2 ms later, a snapshot comes
        // every 500 ms, and one at 22 s brings a vote (a change, which is reported at once and moves
        // the progress report's phase). 30 s: the clock filter pings every 500 ms after 10 s.
        var now = at(ms: 100)
        var pongs: [LocalTime] = []
        var nextSnapshot = at(ms: 100 + snapshotPhaseMs)
        var timerWakes = 0
        var sent: [Effect] = []
        let (from, end) = (at(ms: 20_100), at(ms: 30_100))
        while now < end {
            let wake = (machine.nextWakeup ?? end) + 300_000
            let next = min(wake, pongs.first ?? end, nextSnapshot, end)
            now = max(now, next)
            var out: [Effect]
            if let pong = pongs.first, pong == next {
                pongs.removeFirst()
                out = machine.handle(self.pong(&station, pingAt: pong - Nanos.ms(2)), at: now)
            } else if next == nextSnapshot {
                let votes = now >= at(ms: 22_000) ? Tally(up: 1) : Tally()
                out = machine.handle(
                    station.send(.stateSnapshot(snapshot(at: now, tally: votes)), station: id), at: now)
                nextSnapshot += Nanos.ms(500)
            } else {
                out = machine.handle(.timer, at: now)
                if now >= from { timerWakes += 1 }
            }
            for case .timePing(let ping) in out.messages {
                pongs.append(LocalTime(ns: ping.clientSendNs) + Nanos.ms(2))
            }
            if now >= from { sent += out }
        }
        // The last 10 s: every periodic message is still sent about as often as it is due…
        let tags = sent.messages.map(\.tag)
        let pings = tags.filter { $0 == "timePing" }.count
        #expect((18...21).contains(pings), "\(pings) pings")
        #expect((9...11).contains(tags.filter { $0 == "heartbeat" || $0 == "hello" }.count))
        let progress = sent.reports.filter { if case .state(_, _, .progress) = $0 { true } else { false } }.count
        #expect((37...41).contains(progress), "\(progress) progress reports")
        // …from about four timer wake-ups a second (the progress report's), not seven.
        #expect(timerWakes <= 42, "\(timerWakes) timer wake-ups in 10 s")
    }

    @Test func anImplausiblePongIsLoggedNotCounted() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        // Answers a ping "sent" after it was received.
        let out = machine.handle(pong(&station, pingAt: at(ms: 500)), at: at(ms: 200))
        #expect(machine.clock.samples.isEmpty)
        #expect(out.contains { if case .log(.clock, let text) = $0 { text.contains("implausible") } else { false } })
    }

    @Test func snapshotChangesAreReportedAndFollowedByThePlayer() {
        var machine = listener()
        var station = Fixture.djPeer
        var (now, _) = synchronised(&machine, &station)

        func receive(_ s: StateSnapshot) -> [Effect] {
            now += Nanos.ms(100)
            return machine.handle(station.send(.stateSnapshot(s), station: id), at: now)
        }
        // Only sentAt differs: nothing to tell.
        #expect(receive(snapshot(at: now)).stateChanges.filter { $0 != .progress }.isEmpty)
        let votes = receive(snapshot(at: now, tally: Tally(up: 2, down: 0)))
        #expect(votes.stateChanges.filter { $0 != .progress } == [.votes] && votes.player.isEmpty)
        var paused = snapshot(at: now, tally: Tally(up: 2, down: 0))
        paused.anchor = .paused(at: Nanos.ms(900), djTime: dj(now))
        let pause = receive(paused)
        #expect(pause.stateChanges.filter { $0 != .progress } == [.paused] && pause.player == [.pause])
        var next = paused
        next.nowPlaying = Fixture.tracks[1]
        next.queueIndex = 1
        next.anchor = .playing(at: 0, djTime: dj(now))
        let track = receive(next)
        #expect(track.stateChanges.filter { $0 != .progress } == [.track])
        #expect(track.player == [.load(Fixture.tracks[1], paused: false), .fetch(Fixture.tracks[1].source)])
    }

    @Test func goodbyeEndsItAndStopsThePlayer() {
        var machine = listener()
        var station = Fixture.djPeer
        let (now, _) = synchronised(&machine, &station)
        let out = machine.handle(
            station.send(.goodbye(Goodbye(reason: "The DJ ended the station.")), station: id), at: now + 1)
        #expect(out.reports.map(\.brief) == ["gone Rooftop: The DJ ended the station.", "listener stopped dropped 0"])
        #expect(out.player == [.stop])
        #expect(machine.isFinished && machine.exitError == nil && machine.nextWakeup == nil)
        #expect(machine.handle(.timer, at: now + 2).isEmpty)
    }

    @Test func silenceIsReportedOnceAndTheStationWelcomedBack() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        #expect(machine.nextWakeup.map { $0 <= at(ms: 2_100) + 1 } == true)
        let quiet = machine.run(until: at(ms: 2_100), from: at(ms: 100))
        #expect(!quiet.reportTags.contains("stationSilent"))  // exactly 2 s is not yet silence

        let silent = machine.run(until: at(ms: 4_000), from: at(ms: 2_100))
        #expect(silent.reports.filter { $0.tag == "stationSilent" }.map(\.brief) == ["silent Rooftop"])
        #expect(machine.tuned?.silent == true)

        let back = machine.handle(
            station.send(.stateSnapshot(snapshot(at: at(ms: 4_000))), station: id), at: at(ms: 4_000))
        #expect(back.reports.map(\.brief).contains("back Rooftop"))
        #expect(machine.tuned?.silent == false && !machine.isFinished)
    }

    @Test
    func theSilenceTickLeavesNoWakeupInThePast() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        _ = machine.handle(.timer, at: at(ms: 100))  // hello
        _ = machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 200))), station: id), at: at(ms: 200))
        _ = machine.run(until: at(ms: 2_200), from: at(ms: 200))
        let silence = at(ms: 2_200) + 1
        #expect(machine.nextWakeup == silence)
        let out = machine.handle(.timer, at: silence)
        #expect(out.reportTags.contains("stationSilent"))
        #expect(machine.nextWakeup.map { $0 >= silence } == true, "asks for \(String(describing: machine.nextWakeup))")
    }

    @Test func withdrawalWithoutAGoodbyeWaitsAndKeepsPlaying() {
        var machine = listener()
        var station = Fixture.djPeer
        let (now, _) = synchronised(&machine, &station)
        _ = machine.handle(.timer, at: now + 1)
        let out = machine.handle(.discovery(.removed(name: Fixture.serviceName)), at: now + Nanos.ms(10))
        #expect(out.reports.map(\.brief) == ["silent Rooftop"])
        #expect(out.player.isEmpty)  // the player carries on with the last plan
        #expect(out.sent.filter { $0.message.tag == "hello" }.map(\.to) == [toDJ])
        #expect(!machine.isFinished && machine.tuned?.silent == true)
        // Hellos go on to the old address until the DJ answers; nothing ends it.
        let later = machine.run(until: now + Nanos.seconds(30), from: now + Nanos.ms(10))
        #expect(later.sent.filter { $0.message.tag == "hello" && $0.to == toDJ }.count >= 50)
        #expect(!later.reportTags.contains("stationGone") && !later.player.contains(.stop))
        #expect(!machine.isFinished)
    }

    @Test func aKilledStationStartedAgainOnANewAddressIsFollowedAndResumed() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        var now = at(ms: 100)
        for _ in 0..<4 {
            _ = machine.run(until: now + Nanos.ms(500), from: now)
            now += Nanos.ms(500)
            _ = machine.handle(station.send(.stateSnapshot(snapshot(at: now)), station: id), at: now)
        }
        _ = machine.handle(.discovery(.removed(name: Fixture.serviceName)), at: now + 1)
        now += Nanos.seconds(3)
        _ = machine.run(until: now, from: now - Nanos.seconds(3) + 1)
        // The DJ is back: the same station (ID and key) on another port, found again by DNS-SD.
        let moved = PeerAddress(host: Fixture.djAddress.host, port: 40_123)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: now)
        let resolved = machine.handle(Fixture.resolved(address: moved), at: now + 1)
        #expect(resolved.sent.filter { $0.message.tag == "hello" }.map(\.to) == [.peer(moved)])
        #expect(machine.tuned?.djAddress == moved)
        // Its sequence numbers start over from its clock, above the old ones: not a replay.
        var restarted = Peer(moved.host, port: moved.port, key: Fixture.djKeySeed)
        restarted.sequence = station.sequence + 1_000
        let back = machine.handle(
            restarted.send(.stateSnapshot(snapshot(at: now + Nanos.ms(5))), station: id), at: now + Nanos.ms(5))
        #expect(back.reports.map(\.brief).contains("back Rooftop"))
        #expect(machine.tuned?.silent == false && !machine.isFinished)
        #expect(machine.filter.drops.total == 0)
    }

    /// What a listener dropped, datagrams and records of a DNS domain alike, is in its last report.
    @Test func recordsOfADomainLeftOutAreInTheStoppedReport() {
        var machine = listener()
        var station = Fixture.djPeer
        let (now, _) = synchronised(&machine, &station)
        _ = machine.handle(.discovery(.refused(name: "Killed", reason: .leasePassed)), at: now + 1)
        _ = machine.handle(.datagram([1, 2, 3], from: Fixture.djAddress), at: now + 2)
        let out = machine.handle(.quit, at: now + 3)
        let stopped = out.reports.compactMap { if case .listenerStopped(let dropped) = $0 { dropped } else { nil } }
        #expect(stopped.map { $0.counts["dns_lease_passed"] } == [1])
        #expect(stopped.map(\.total) == [2])
    }

    @Test func quitSaysLeaveWhenTunedAndNothingOtherwise() {
        var machine = listener()
        var station = Fixture.djPeer
        let (now, _) = synchronised(&machine, &station)
        let out = machine.handle(.quit, at: now + 1)
        #expect(out.sent.map(\.message) == [.leave(Leave()), .leave(Leave())])
        #expect(out.sent.allSatisfy { $0.to == toDJ })
        #expect(out.player == [.stop])
        #expect(out.reportTags == ["listenerStopped"])
        #expect(machine.isFinished && machine.exitError == nil)

        var searching = listener()
        _ = searching.handle(.start, at: t0)
        #expect(searching.handle(.quit, at: at(ms: 100)).isEmpty)
        #expect(searching.isFinished && searching.exitError == nil)
    }

    @Test func notFoundWithinTheTimeoutFailsWithNotFound() {
        var named = listener(query: "Rooftop")
        _ = named.handle(.start, at: t0)
        _ = named.run(until: at(ms: 4_999), from: t0)
        #expect(!named.isFinished)
        _ = named.run(until: at(ms: 5_000), from: at(ms: 4_999))
        #expect(named.isFinished)
        #expect(named.exitError?.code == .notFound && named.exitError?.exitCode == 3)
        #expect(named.exitError?.description.contains("'Rooftop'") == true)

        var anyStation = listener(query: nil)
        _ = anyStation.handle(.start, at: t0)
        _ = anyStation.handle(.timer, at: at(ms: 5_000))
        #expect(anyStation.exitError?.code == .notFound)
        #expect(anyStation.exitError?.description.contains("eth0") == true)
    }

    @Test func theOnlyStationIsChosenOnlyOnceTheSweepIsDone() {
        var machine = listener(query: nil)
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        _ = machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
        #expect(machine.tuned == nil)  // another station might still answer
        let out = machine.handle(.discovery(.allForNow), at: at(ms: 150))
        #expect(out.joinedGroups == [Fixture.group])
        #expect(machine.tuned?.station.id == id)
    }

    @Test func twoStationsAndNoQueryIsAUsageErrorOnceTheSweepSettles() {
        var machine = listener(query: nil)
        var rooftop = Fixture.djPeer
        var basement = OtherStation.peer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = machine.handle(.discovery(.discovered(name: "Basement")), at: at(ms: 10))
        _ = machine.handle(.discovery(.allForNow), at: at(ms: 15))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        _ = machine.handle(rooftop.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
        #expect(!machine.isFinished)  // Basement is still being resolved
        _ = machine.handle(OtherStation.resolved, at: at(ms: 110))
        #expect(!machine.isFinished && machine.tuned == nil)  // and has not answered yet
        var other = Fixture.snapshot(name: "Basement", dj: DJTime(ns: 1))
        other.sentAtNs = 2
        _ = machine.handle(basement.send(.stateSnapshot(other), station: Fixture.otherStationID), at: at(ms: 200))
        #expect(machine.isFinished && machine.tuned == nil)
        #expect(machine.exitError?.code == .usage && machine.exitError?.exitCode == 2)
        #expect(machine.exitError?.description.contains("Several stations") == true)
    }

    @Test func aStationThatNeverAnswersDoesNotHoldUpTheOther() {
        var machine = listener(query: nil, timeoutMs: 10_000)
        var rooftop = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(OtherStation.resolved, at: at(ms: 20))  // Basement: resolved, never heard
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        _ = machine.handle(.discovery(.allForNow), at: at(ms: 30))
        _ = machine.handle(rooftop.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
        #expect(machine.tuned == nil)
        // Three query rounds (1.5 s) after Basement's first query it no longer counts.
        var now = at(ms: 100)
        var steps = 0
        while machine.tuned == nil, !machine.isFinished, let wake = machine.nextWakeup, wake <= at(ms: 3_000) {
            steps += 1
            #expect(wake > now || steps == 1, "woken again at \(wake)")
            guard wake > now || steps == 1, steps < 1_000 else { return }
            now = wake
            _ = machine.handle(.timer, at: now)
            // Rooftop keeps answering its queries.
            if machine.tuned == nil, (now - t0) % Nanos.ms(500) == Nanos.ms(20) {
                _ = machine.handle(rooftop.send(.stateSnapshot(snapshot(at: now)), station: id), at: now)
            }
        }
        #expect(machine.tuned?.station.id == id)
        #expect(now > at(ms: 1_520) && now < at(ms: 2_100), "tuned in at \(now - t0) ns")
    }

    @Test func snapshotsSignedByAnyoneButTheStationAreDropped() {
        var machine = listener()
        var impostor = Peer("10.0.0.66", key: 0x66)
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        let forged = machine.handle(
            impostor.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: id), at: at(ms: 100))
        #expect(machine.tuned == nil && forged.joinedGroups.isEmpty)
        let unknown = impostor.send(.stateSnapshot(snapshot(at: at(ms: 100))), station: Fixture.otherStationID)
        _ = machine.handle(unknown, at: at(ms: 110))
        #expect(machine.filter.drops.counts == ["bad_signature": 1, "wrong_station": 1])

        var station = Fixture.djPeer
        _ = machine.handle(station.send(.stateSnapshot(snapshot(at: at(ms: 200))), station: id), at: at(ms: 200))
        #expect(machine.tuned != nil)
        let goodbye = impostor.send(.goodbye(Goodbye(reason: "fake")), station: id)
        _ = machine.handle(goodbye, at: at(ms: 300))
        #expect(!machine.isFinished)
        #expect(machine.filter.drops.counts["bad_signature"] == 2)
    }

    @Test func discoveryFailureFinishesWithADiscoveryError() {
        var machine = listener()
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.failed("no avahi")), at: at(ms: 10))
        #expect(machine.isFinished && machine.exitError?.code == .discovery)
    }

    @Test func playerFailureIsWarnedAndRetried() {
        var machine = listener()
        var station = Fixture.djPeer
        let (now, _) = synchronised(&machine, &station)
        let failed = machine.handle(.playerFailed("codec"), at: now)
        #expect(failed.warnings.count == 1 && failed.player.isEmpty)
        let later = machine.handle(.timer, at: now + Nanos.seconds(1))
        #expect(later.player == [.load(Fixture.tracks[0], paused: false)])
    }

    @Test func withoutAudioThePlayerIsNeverCommanded() {
        var machine = listener(playsAudio: false)
        var station = Fixture.djPeer
        let (now, effects) = synchronised(&machine, &station)
        #expect(machine.clock.isSynchronized)
        #expect(effects.player.isEmpty)
        #expect(machine.handle(.quit, at: now + 1).player.isEmpty)
    }
}

/// A tuned-in listener hands its station's live frames and repairs, as they passed the filter, to
/// the live output; a listener without audio, or a station it is not tuned to, gives it nothing.
@Suite struct ListenerLiveReceivedTests {
    let base = ListenerMachineTests()
    let frame = LiveFrame(sequence: 7, firstSample: DJTime(ns: 1_000), duration: .ms10, payload: [1, 2, 3])
    let repair = LiveRepair(
        firstSequence: 4, dataCount: 4, parityCount: 2, parityIndex: 1, shard: [UInt8](repeating: 9, count: 15))

    static func live(_ effects: [Effect]) -> [LiveReceived] {
        effects.compactMap { if case .live(let input) = $0 { input } else { nil } }
    }

    @Test func framesAndRepairsGoToTheLiveOutput() {
        var machine = base.listener()
        var station = Fixture.djPeer
        _ = base.tunedIn(&machine, &station)
        let out =
            machine.handle(station.send(.liveFrame(frame), station: base.id), at: at(ms: 200))
            + machine.handle(station.send(.liveRepair(repair), station: base.id), at: at(ms: 210))
        #expect(Self.live(out) == [.frame(frame), .repair(repair)])
    }

    @Test("live_status's network counters: each frame asked for again, and the datagrams dropped")
    func networkCounters() {
        var machine = base.listener()
        var station = Fixture.djPeer
        let (now, _) = base.synchronised(&machine, &station)
        // Frames 7 and 9 of a stream sampled just now: 8, lost between them, can still be played.
        let seven = LiveFrame(sequence: 7, firstSample: base.dj(now), duration: .ms10, payload: [1, 2, 3])
        let nine = LiveFrame(
            sequence: 9, firstSample: base.dj(now + Nanos.ms(20)), duration: .ms10, payload: [1, 2, 3])
        var out = machine.handle(station.send(.liveFrame(seven), station: base.id), at: now + Nanos.ms(11))
        out += machine.handle(station.send(.liveFrame(nine), station: base.id), at: now + Nanos.ms(31))
        out += machine.handle(.timer, at: now + Nanos.ms(32))
        let asks = out.compactMap { if case .send(.liveResend(let r), _, _) = $0 { r } else { nil } }
        // Frame 8 is missing: asked for as many times as requests named it.
        #expect(!asks.isEmpty, "frame 8 asked for")
        #expect(machine.liveNetwork.asked == UInt64(asks.filter { $0.sequences.contains(8) }.count))
        #expect(machine.liveNetwork.arrivedAfterAsking == 0)
        let before = machine.liveNetwork.dropped.total
        _ = machine.handle(.datagram([1, 2, 3], from: station.address), at: now + Nanos.ms(33))
        #expect(machine.liveNetwork.dropped.total == before + 1)
    }

    @Test func aListenerWithoutAudioOrNotTunedInPlaysNothing() {
        var silent = base.listener(playsAudio: false)
        var station = Fixture.djPeer
        _ = base.tunedIn(&silent, &station)
        #expect(Self.live(silent.handle(station.send(.liveFrame(frame), station: base.id), at: at(ms: 200))).isEmpty)

        var searching = base.listener()
        var other = Fixture.djPeer
        _ = searching.handle(.start, at: t0)
        #expect(Self.live(searching.handle(other.send(.liveFrame(frame), station: base.id), at: at(ms: 50))).isEmpty)
    }
}
