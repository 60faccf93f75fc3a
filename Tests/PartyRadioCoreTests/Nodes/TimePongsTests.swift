import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Time pongs to the group (docs/PROTOCOL.md): a settled listener on the group's link lets its
/// ping's answer wait for the DJ's next batch, one datagram to the group for every such ping of the
/// moment; a listener that cannot hear the group, or whose last answer did not come, gets its own.
@Suite struct TimePongsTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)

    func startedDJ() -> DJMachine {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    func batches(_ effects: [Effect]) -> [(TimePongs, Destination)] {
        effects.sent.compactMap { if case .timePongs(let pongs) = $0.message { (pongs, $0.to) } else { nil } }
    }

    func pongs(_ effects: [Effect]) -> [(TimePong, Destination)] {
        effects.sent.compactMap { if case .timePong(let pong) = $0.message { (pong, $0.to) } else { nil } }
    }

    @Test("batched pings wait at most 200 ms and go out together to the group; an unbatched one is answered at once")
    func theDJAnswersBatchedPingsTogether() {
        var dj = startedDJ()
        var a = Peer("10.0.0.7", key: 7)
        var b = Peer("10.0.0.8", key: 8)
        var c = Peer("10.0.0.9", key: 9)
        var out = dj.handle(
            a.send(.timePing(TimePing(clientSendNs: 11, batched: true)), station: id), at: at(ms: 1_000))
        out += dj.handle(b.send(.timePing(TimePing(clientSendNs: 22, batched: true)), station: id), at: at(ms: 1_150))
        #expect(batches(out).isEmpty && pongs(out).isEmpty)
        let own = dj.handle(c.send(.timePing(TimePing(clientSendNs: 33)), station: id), at: at(ms: 1_160))
        #expect(pongs(own).map(\.1) == [.peer(c.address)])
        #expect(batches(own).isEmpty)

        // Due 200 ms after the first of them.
        #expect(dj.nextWakeup.map { $0 <= at(ms: 1_200) } == true)
        #expect(batches(dj.handle(.timer, at: at(ms: 1_199))).isEmpty)
        let flushed = batches(dj.handle(.timer, at: at(ms: 1_200)))
        #expect(flushed.count == 1)
        #expect(flushed.first?.1 == group)
        // Each entry names its pinger by its key's first 8 bytes (the test keys are one byte 32 times).
        #expect(
            flushed.first?.0.entries == [
                .init(guest: 0x0707_0707_0707_0707, clientSendNs: 11, serverReceiveNs: at(ms: 1_000).ns),
                .init(guest: 0x0808_0808_0808_0808, clientSendNs: 22, serverReceiveNs: at(ms: 1_150).ns),
            ])
        #expect(flushed.first?.0.serverSendNs == at(ms: 1_200).ns)
        // Nothing pending: no more batches, and no wake-up for one.
        #expect(batches(dj.handle(.timer, at: at(ms: 1_600))).isEmpty)
    }

    @Test("a batch that is full goes at once; the next pings start the next")
    func aFullBatchGoesAtOnce() {
        var dj = startedDJ()
        var out: [Effect] = []
        for n in 0...TimePongs.entryRange.upperBound {
            var peer = Peer("10.0.1.\(n)", key: UInt8(n + 1))
            out += dj.handle(
                peer.send(.timePing(TimePing(clientSendNs: Int64(n), batched: true)), station: id),
                at: at(ms: 1_000 + Int64(n)))
        }
        #expect(batches(out).map(\.0.entries.count) == [40])
        let rest = batches(dj.handle(.timer, at: at(ms: 1_300)))
        #expect(rest.map { $0.0.entries.map(\.clientSendNs) } == [[40]])
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
    }

    // MARK: The listener

    func listener(key: PublicKey?, wantsUnicast: Bool = false) -> ListenerMachine {
        ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: false, wantsUnicast: wantsUnicast, key: key),
            verifier: ChecksumVerifier())
    }

    /// The DJ's clock reads 5 s ahead; every exchange takes 1 ms each way.
    static let djAheadNs = Nanos.seconds(5)

    /// Runs `machine` tuned in to the fixture station from 100 ms until `end`, answering each ping
    /// 2 ms after it went: an unbatched one with its pong, a batched one with a batch that also
    /// answers someone else, unless `lose` says that batch is lost. Returns each ping with its
    /// instant, and the samples the clock took (its window holds 60 s: none drops out here).
    func run(
        _ machine: inout ListenerMachine, until end: LocalTime, lose: (LocalTime) -> Bool = { _ in false }
    ) -> (pings: [(at: LocalTime, batched: Bool)], samples: Int) {
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        var snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 100).ns + Self.djAheadNs))
        snapshot.sentAtNs = at(ms: 100).ns + Self.djAheadNs
        var out = machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
        var now = at(ms: 100)
        var answers: [(at: LocalTime, ping: TimePing)] = []
        var pings: [(at: LocalTime, batched: Bool)] = []
        var samples = 0
        while now < end {
            for case .timePing(let ping) in out.messages {
                pings.append((LocalTime(ns: ping.clientSendNs), ping.batched))
                answers.append((LocalTime(ns: ping.clientSendNs) + Nanos.ms(2), ping))
            }
            let next = min(answers.first?.at ?? end, machine.nextWakeup ?? end, end)
            now = max(now, next)
            guard let answer = answers.first, answer.at == now else {
                out = machine.handle(.timer, at: now)
                continue
            }
            answers.removeFirst()
            let t2 = answer.at.ns - Nanos.ms(1) + Self.djAheadNs
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
                out = machine.handle(
                    station.send(.timePongs(TimePongs(serverSendNs: t2, entries: entries)), station: id), at: now)
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

    @Test("a batch lost: the next ping asks for its own pong, the one after for the batch again")
    func aLostBatchMakesTheNextPingAskForItsOwn() {
        var machine = listener(key: testKey(5))
        // Shorter than the steady interval: one batch is lost.
        let lost = at(ms: 15_000)...at(ms: 15_400)
        let (pings, samples) = run(&machine, until: at(ms: 20_000), lose: { lost.contains($0) })
        let after = pings.filter { $0.at > lost.lowerBound - Nanos.ms(2) }
        #expect(after.count >= 4)
        guard after.count >= 4 else { return }
        // The ping whose batch was lost was batched; the next is not; then batched again.
        #expect(after.prefix(4).map(\.batched) == [true, false, true, true])
        #expect(samples == pings.count - 1)
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
