import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Time pongs to the group (docs/PROTOCOL.md): a settled listener on the group's link lets its
/// ping's answer wait for the DJ's next batch, one datagram to the group for every such ping of the
/// moment; a listener that cannot hear the group, or whose last answer did not come, gets its own.
@Suite struct TimePongsTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)

    func startedDJ() -> DJMachine { Fixture.startedDJ() }

    /// `peer` said hello: it is in the DJ's listener list.
    func joined(_ dj: inout DJMachine, _ peer: inout Peer, at time: LocalTime) {
        _ = dj.handle(peer.send(.hello(Hello(listenerName: "guest")), station: id), at: time)
    }

    @Test(
        "the flags byte: absent is an unbatched ping, as DJs before it sent and read; bit 0 batched; any other bit malformed"
    )
    func theTimePingsFlags() throws {
        var writer = ByteWriter()
        TimePing(clientSendNs: 5).encode(into: &writer)
        #expect(writer.bytes == [0, 0, 0, 0, 0, 0, 0, 5])
        writer = ByteWriter()
        TimePing(clientSendNs: 5, batched: true).encode(into: &writer)
        #expect(writer.bytes == [0, 0, 0, 0, 0, 0, 0, 5, 1])
        var reader = ByteReader(writer.bytes)
        #expect(try TimePing(from: &reader) == TimePing(clientSendNs: 5, batched: true))
        reader = ByteReader([0, 0, 0, 0, 0, 0, 0, 5, 0])
        #expect(try TimePing(from: &reader) == TimePing(clientSendNs: 5))
        for flags: UInt8 in [2, 3, 0x80] {
            reader = ByteReader([0, 0, 0, 0, 0, 0, 0, 5, flags])
            #expect(throws: WireError.self) { try TimePing(from: &reader) }
        }
    }

    func batches(_ effects: [Effect]) -> [(TimePongs, Destination)] {
        effects.sent.compactMap { if case .timePongs(let pongs) = $0.message { (pongs, $0.to) } else { nil } }
    }

    func pongs(_ effects: [Effect]) -> [(TimePong, Destination)] {
        effects.sent.compactMap { if case .timePong(let pong) = $0.message { (pong, $0.to) } else { nil } }
    }

    @Test("batched pings wait at most 100 ms and go out together to the group; an unbatched one is answered at once")
    func theDJAnswersBatchedPingsTogether() {
        var dj = startedDJ()
        var a = Peer("10.0.0.7", key: 7)
        var b = Peer("10.0.0.8", key: 8)
        var c = Peer("10.0.0.9", key: 9)
        joined(&dj, &a, at: at(ms: 900))
        joined(&dj, &b, at: at(ms: 900))
        joined(&dj, &c, at: at(ms: 900))
        var out = dj.handle(
            a.send(.timePing(TimePing(clientSendNs: 11, batched: true)), station: id), at: at(ms: 1_000))
        out += dj.handle(b.send(.timePing(TimePing(clientSendNs: 22, batched: true)), station: id), at: at(ms: 1_050))
        #expect(batches(out).isEmpty && pongs(out).isEmpty)
        let own = dj.handle(c.send(.timePing(TimePing(clientSendNs: 33)), station: id), at: at(ms: 1_060))
        #expect(pongs(own).map(\.1) == [.peer(c.address)])
        #expect(batches(own).isEmpty)

        // Due 100 ms after the first of them.
        #expect(dj.nextWakeup.map { $0 <= at(ms: 1_100) } == true)
        #expect(batches(dj.handle(.timer, at: at(ms: 1_099))).isEmpty)
        let flushed = batches(dj.handle(.timer, at: at(ms: 1_100)))
        #expect(flushed.count == 1)
        #expect(flushed.first?.1 == group)
        // Each entry names its pinger by its key's first 8 bytes (the test keys are one byte 32 times).
        #expect(
            flushed.first?.0.entries == [
                .init(guest: 0x0707_0707_0707_0707, clientSendNs: 11, serverReceiveNs: at(ms: 1_000).ns),
                .init(guest: 0x0808_0808_0808_0808, clientSendNs: 22, serverReceiveNs: at(ms: 1_050).ns),
            ])
        #expect(flushed.first?.0.serverSendNs == at(ms: 1_100).ns)
        // Nothing pending: no more batches.
        #expect(batches(dj.handle(.timer, at: at(ms: 1_600))).isEmpty)
    }

    @Test("a full window goes at once; the window's later pings, and a second from one key, get pongs of their own")
    func aFullBatchGoesAtOnce() {
        var dj = startedDJ()
        var peers = (0...TimePongs.entryRange.upperBound).map { Peer("10.0.1.\($0)", key: UInt8($0 + 1)) }
        for n in peers.indices { joined(&dj, &peers[n], at: at(ms: 900)) }
        var out: [Effect] = []
        for n in peers.indices {
            out += dj.handle(
                peers[n].send(.timePing(TimePing(clientSendNs: Int64(n), batched: true)), station: id),
                at: at(ms: 1_000 + Int64(n)))
        }
        #expect(batches(out).map(\.0.entries.count) == [40])
        #expect(pongs(out).map(\.1) == [.peer(peers[40].address)])
        // The same key again within the window: its own pong, not a second entry.
        let again = dj.handle(
            peers[0].send(.timePing(TimePing(clientSendNs: 99, batched: true)), station: id), at: at(ms: 1_050))
        #expect(pongs(again).map(\.1) == [.peer(peers[0].address)])
        #expect(batches(dj.handle(.timer, at: at(ms: 1_100))).isEmpty)
        // A new window from the next ping on.
        let next = dj.handle(
            peers[0].send(.timePing(TimePing(clientSendNs: 100, batched: true)), station: id), at: at(ms: 1_200))
        #expect(pongs(next).isEmpty)
        let rest = batches(dj.handle(.timer, at: at(ms: 1_300)))
        #expect(rest.map { $0.0.entries.map(\.clientSendNs) } == [[100]])
    }

    @Test("a speaker's batched ping is batched, like a listed guest's")
    func aSpeakerIsBatched() {
        var dj = startedDJ()
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        let status = SpeakerStatus(
            name: "Kitchen", room: "Downstairs", settings: SpeakerSettings(), playing: true, lastControl: 0)
        _ = dj.handle(kitchen.send(.speakerStatus(status), station: id), at: at(ms: 900))
        #expect(dj.speakers.isSpeaker(kitchen.publicKey) && dj.engine.roster.count == 0)
        let out = dj.handle(
            kitchen.send(.timePing(TimePing(clientSendNs: 7, batched: true)), station: id), at: at(ms: 1_000))
        #expect(pongs(out).isEmpty)
        #expect(batches(dj.handle(.timer, at: at(ms: 1_100))).map { $0.0.entries.map(\.clientSendNs) } == [[7]])
    }

    @Test(
        "a batched ping from a key the DJ does not list is answered by its own pong: a stranger never makes it send to the group"
    )
    func aStrangerGetsItsOwnPong() {
        var dj = startedDJ()
        var out: [Effect] = []
        for n in 0..<100 {
            var stranger = Peer("10.0.2.\(n % 50)", key: UInt8(100 + n))
            out += dj.handle(
                stranger.send(.timePing(TimePing(clientSendNs: Int64(n), batched: true)), station: id),
                at: at(ms: 1_000 + Int64(n)))
        }
        out += dj.handle(.timer, at: at(ms: 1_500))
        #expect(batches(out).isEmpty)
        #expect(pongs(out).count == 100)
        #expect(pongs(out).allSatisfy { if case .peer = $0.1 { true } else { false } })
    }

    @Test("a listener that gets unicast copies is answered by unicast, whatever its ping asks")
    func aUnicastListenerGetsItsOwnPong() {
        var dj = startedDJ()
        var far = Peer("10.99.13.2", key: 7)
        let first = dj.handle(far.send(.timePing(TimePing(clientSendNs: 1)), station: id), at: at(ms: 90))
        let cookie = pongs(first).first?.0.cookie
        _ = dj.handle(
            far.send(.hello(Hello(listenerName: "far", wantsUnicast: true, cookie: cookie)), station: id),
            at: at(ms: 100))
        #expect(dj.unicastListeners.addresses == [far.address])
        let out = dj.handle(far.send(.timePing(TimePing(clientSendNs: 2, batched: true)), station: id), at: at(ms: 200))
        #expect(pongs(out).map(\.1) == [.peer(far.address)])
        #expect(batches(out + dj.handle(.timer, at: at(ms: 500))).isEmpty)
        // Its repeated hello is answered too: it may not hear the group's snapshots.
        let repeated = dj.handle(
            far.send(
                .hello(Hello(listenerName: "far", wantsUnicast: true, cookie: cookie, isRepeat: true)), station: id),
            at: at(ms: 300))
        #expect(repeated.snapshots(to: .peer(far.address)).count == 1)
    }

    // MARK: The listener

    func listener(key: PublicKey?, wantsUnicast: Bool = false) -> ListenerMachine {
        ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: false, wantsUnicast: wantsUnicast, key: key),
            verifier: ChecksumVerifier())
    }

    /// The DJ's clock reads 5 s ahead; every exchange takes 1 ms each way, and the DJ holds a
    /// batched ping this long.
    static let djAheadNs = Nanos.seconds(5)
    static let holdNs = Nanos.ms(80)

    /// Runs `machine` tuned in to the fixture station from 100 ms until `end`, answering each ping:
    /// an unbatched one with its pong 2 ms after it went, a batched one with a batch that also
    /// answers someone else, ``holdNs`` later, unless `lose` says that batch is lost (or `garble`
    /// that its t3 comes a second after t2: a round trip below zero). Returns each ping with its
    /// instant, and the samples the clock took (its window holds 60 s: none drops out here).
    func run(
        _ machine: inout ListenerMachine, until end: LocalTime, lose: (LocalTime) -> Bool = { _ in false },
        garble: (LocalTime) -> Bool = { _ in false }, snapshots: Bool = true
    ) -> (pings: [(at: LocalTime, batched: Bool)], samples: Int) {
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        var snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 100).ns + Self.djAheadNs))
        snapshot.sentAtNs = at(ms: 100).ns + Self.djAheadNs
        var out = machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
        var now = at(ms: 100)
        // The group's snapshots, twice a second: the station is heard.
        var nextSnapshot = snapshots ? at(ms: 600) : end
        var answers: [(at: LocalTime, ping: TimePing)] = []
        var pings: [(at: LocalTime, batched: Bool)] = []
        var samples = 0
        while now < end {
            for case .timePing(let ping) in out.messages {
                pings.append((LocalTime(ns: ping.clientSendNs), ping.batched))
                answers.append(
                    (LocalTime(ns: ping.clientSendNs) + Nanos.ms(2) + (ping.batched ? Self.holdNs : 0), ping))
            }
            let next = min(answers.first?.at ?? end, machine.nextWakeup ?? end, nextSnapshot, end)
            now = max(now, next)
            if now == nextSnapshot {
                snapshot.sentAtNs = now.ns + Self.djAheadNs
                out = machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: now)
                nextSnapshot += Nanos.ms(500)
                continue
            }
            guard let answer = answers.first, answer.at == now else {
                out = machine.handle(.timer, at: now)
                continue
            }
            answers.removeFirst()
            let t2 = answer.ping.clientSendNs + Nanos.ms(1) + Self.djAheadNs
            let before = machine.clock.samples.count
            if answer.ping.batched {
                if lose(now) {
                    out = []
                    continue
                }
                let entries: [TimePongs.Entry] = [
                    .init(
                        guest: 0x0101_0101_0101_0101, clientSendNs: answer.ping.clientSendNs - 5, serverReceiveNs: t2),
                    .init(guest: 0x0505_0505_0505_0505, clientSendNs: answer.ping.clientSendNs, serverReceiveNs: t2),
                ]
                let t3 = t2 + (garble(now) ? Nanos.seconds(1) : Self.holdNs)
                out = machine.handle(
                    station.send(.timePongs(TimePongs(serverSendNs: t3, entries: entries)), station: id), at: now)
            } else {
                out = machine.handle(
                    station.send(
                        .timePong(
                            TimePong(clientSendNs: answer.ping.clientSendNs, serverReceiveNs: t2, serverSendNs: t2)),
                        station: id),
                    at: now)
            }
            samples += machine.clock.samples.count - before
        }
        return (pings, samples)
    }

    @Test("a settled listener asks for the batch once its last ping was answered, and takes the entry that names it")
    func aSettledListenerTakesItsEntry() {
        var machine = listener(key: testKey(5))
        let (pings, samples) = run(&machine, until: at(ms: 20_000))
        // Joining, burst and settling (the first 10 s after the first sample) ask for their own pong.
        #expect(pings.filter { $0.at < at(ms: 10_000) }.allSatisfy { !$0.batched })
        let steady = pings.filter { $0.at > at(ms: 11_000) }
        #expect(steady.count >= 15)
        #expect(steady.allSatisfy { $0.batched })
        // Every answer became a sample: the entry naming this key, not the other's.
        #expect(samples == pings.count)
        #expect(machine.clock.isSynchronized)
        let offset = machine.clock.estimate.map { $0.offset(at: at(ms: 20_000)) } ?? 0
        #expect(abs(offset - Self.djAheadNs) < Nanos.ms(1))
    }

    @Test(
        "a batch lost, or one whose sample the clock cannot use: the next ping asks for its own pong, the one after for the batch again",
        arguments: [false, true])
    func aMissedBatchMakesTheNextPingAskForItsOwn(garbled: Bool) {
        var machine = listener(key: testKey(5))
        // Shorter than the steady interval: one batch is missed.
        let missed = at(ms: 15_000)...at(ms: 15_400)
        let (pings, samples) = run(
            &machine, until: at(ms: 20_000), lose: { !garbled && missed.contains($0) },
            garble: { garbled && missed.contains($0) })
        let after = pings.filter { $0.at > missed.lowerBound - Nanos.ms(2) - Self.holdNs }
        #expect(after.count >= 4)
        guard after.count >= 4 else { return }
        // The ping whose batch was missed was batched; the next is not; then batched again.
        #expect(after.prefix(4).map(\.batched) == [true, false, true, true])
        #expect(samples == pings.count - 1)
        #expect(machine.samplesFromBatches > 10)
    }

    @Test("two batches lost in a row (the group does not reach here): pings ask for pongs of their own for 30 s")
    func twoLostBatchesPauseTheBatching() {
        var machine = listener(key: testKey(5))
        let lost = at(ms: 15_000)...at(ms: 16_500)
        let (pings, _) = run(&machine, until: at(ms: 50_000), lose: { lost.contains($0) })
        let first = pings.first { $0.at > lost.lowerBound - Nanos.ms(2) - Self.holdNs }?.at ?? at(ms: 0)
        let during = pings.filter { $0.at > first && $0.at < first + Nanos.seconds(30) }
        // Batched (lost), its own, batched (lost): then its own for 30 s.
        #expect(Array(during.prefix(2).map(\.batched)) == [false, true])
        #expect(during.dropFirst(2).allSatisfy { !$0.batched })
        #expect(during.count > 50)
        #expect(pings.filter { $0.at > first + Nanos.seconds(31) }.contains { $0.batched })
    }

    @Test("a listener that hears no snapshot (the station silent here) never asks for the batch")
    func aSilentStationNoBatch() {
        var machine = listener(key: testKey(5))
        let (pings, samples) = run(&machine, until: at(ms: 20_000), snapshots: false)
        #expect(pings.count > 20)
        #expect(pings.allSatisfy { !$0.batched })
        #expect(samples == pings.count)
    }

    @Test("a listener that gets unicast copies, or knows no key of its own, never asks for the batch")
    func offTheGroupNoBatch() {
        for var machine in [listener(key: testKey(5), wantsUnicast: true), listener(key: nil)] {
            let (pings, samples) = run(&machine, until: at(ms: 15_000))
            #expect(pings.count > 20)
            #expect(pings.allSatisfy { !$0.batched })
            #expect(samples == pings.count)
        }
    }
}
