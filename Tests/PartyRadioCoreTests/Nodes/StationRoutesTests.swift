import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// A station announced at more than one address: a copy of its advert (its ID and key are public)
/// pointing elsewhere, its own service moving, or one service seen over IPv4 and IPv6. The rule:
/// a station moves to another address only after a pong signed with its key came from there in
/// answer to this node's ping; another service is a candidate, never a replacement; withdrawing
/// one service does not drop a station still announced by another.
@Suite struct StationRoutesTests {
    let id = Fixture.stationID
    /// The attacker's copy: the real TXT record under another name, at the attacker's address.
    static let copyName = "Rooftop (2nd room)"
    static let attacker = PeerAddress(host: "10.0.0.66", port: 40_000)
    static var copied: NodeInput { Fixture.resolved(name: copyName, address: attacker) }

    func snapshot(_ station: inout Peer, sent: Int64 = 1) -> NodeInput {
        var s = Fixture.snapshot(dj: DJTime(ns: sent))
        s.sentAtNs = sent
        return station.send(.stateSnapshot(s), station: Fixture.stationID)
    }

    /// The pong `station` sends to a ping whose t1 was `echo`.
    func pong(_ station: inout Peer, echo: LocalTime) -> NodeInput {
        station.send(
            .timePong(TimePong(clientSendNs: echo.ns, serverReceiveNs: 5, serverSendNs: 6)), station: Fixture.stationID)
    }

    func pings(_ effects: [Effect], to address: PeerAddress) -> [TimePing] {
        effects.sent.compactMap {
            if case .timePing(let ping) = $0.message, $0.to == .peer(address) { ping } else { nil }
        }
    }

    func observer() -> ObserverMachine {
        var observer = ObserverMachine(verifier: ChecksumVerifier())
        _ = observer.handle(.start, at: t0)
        return observer
    }

    /// An observer that found the station and heard it at its real address.
    func watching() -> (ObserverMachine, Peer) {
        var observer = observer()
        var station = Fixture.djPeer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 10))
        _ = observer.handle(snapshot(&station), at: at(ms: 20))
        #expect(observer.summaries(now: at(ms: 20)).map(\.address) == [Fixture.djAddress.host])
        return (observer, station)
    }

    @Test func aCopiedAdvertIsOnlyACandidateThatIsAskedForAProof() {
        var (observer, station) = watching()
        let copied = observer.handle(Self.copied, at: at(ms: 30))
        // The copy is asked for a signed answer; the real address stays the one listed and queried.
        #expect(pings(copied, to: Self.attacker).count == 1)
        #expect(copied.sent.filter { $0.message.tag == "query" }.allSatisfy { $0.to == .peer(Fixture.djAddress) })
        #expect(copied.reports.isEmpty)
        var out: [Effect] = []
        for ms in stride(from: Int64(430), through: 5_000, by: 400) {
            out += observer.run(until: at(ms: ms), from: at(ms: ms - 400))
            out += observer.handle(snapshot(&station, sent: ms), at: at(ms: ms))
        }
        #expect(!out.sent.contains { $0.to == .peer(Self.attacker) && $0.message.tag != "timePing" })
        #expect(pings(out, to: Self.attacker).count >= 9)  // every 0.5 s
        #expect(observer.summaries(now: at(ms: 5_000)).map(\.address) == [Fixture.djAddress.host])
        #expect(!out.reports.contains { $0.tag == "stationsChanged" && $0.brief.contains("vanished") })
    }

    @Test func whatTheCopyReplaysOrAnswersWithoutAFreshProofMovesNothing() throws {
        var (observer, station) = watching()
        let copied = observer.handle(Self.copied, at: at(ms: 30))
        let ping = try #require(pings(copied, to: Self.attacker).first)
        // The attacker replays the station's signed datagrams from its own address: snapshots, and
        // a pong the station gave someone else (its echo is older than the ping to the copy).
        var replayer = Peer(address: Self.attacker, publicKey: Fixture.advert.publicKey)
        replayer.sequence = station.sequence + 100
        _ = observer.handle(snapshot(&replayer, sent: 40), at: at(ms: 40))
        _ = observer.handle(pong(&replayer, echo: at(ms: 29)), at: at(ms: 41))
        // …and a pong whose echo is one this node never sent yet (made ahead of time).
        _ = observer.handle(pong(&replayer, echo: at(ms: 45)), at: at(ms: 42))
        #expect(ping.clientSendNs == at(ms: 30).ns)
        #expect(observer.watch.directory.entries[id]?.followed == Fixture.djAddress)
        #expect(observer.summaries(now: at(ms: 42)).map(\.address) == [Fixture.djAddress.host])
        // A real pong to that ping from the copy's address is a route, but the station is alive and
        // trusted where it is, and IPv4 is no better than IPv4: it stays.
        _ = observer.handle(pong(&replayer, echo: at(ms: 30)), at: at(ms: 43))
        #expect(observer.watch.directory.entries[id]?.followed == Fixture.djAddress)
    }

    @Test func withdrawingTheCopyLeavesTheStationListed() {
        var (observer, _) = watching()
        _ = observer.handle(Self.copied, at: at(ms: 30))
        let withdrawn = observer.handle(.discovery(.removed(name: Self.copyName)), at: at(ms: 40))
        #expect(withdrawn.reports.isEmpty)
        #expect(observer.summaries(now: at(ms: 40)).map(\.address) == [Fixture.djAddress.host])
        #expect(observer.watch.directory.entries[id]?.serviceName == Fixture.serviceName)
        // No more pings to the copy once it is gone.
        #expect(pings(observer.run(until: at(ms: 2_000), from: at(ms: 40)), to: Self.attacker).isEmpty)
    }

    @Test func theStationGoesOnlyWithItsLastService() {
        var (observer, _) = watching()
        _ = observer.handle(Self.copied, at: at(ms: 30))
        // The real service withdrawn while the copy stays: still known (until silent), not withdrawn.
        let real = observer.handle(.discovery(.removed(name: Fixture.serviceName)), at: at(ms: 40))
        #expect(!real.reports.contains { $0.brief.contains("withdrawn") })
        #expect(observer.watch.directory.entries[id] != nil)
        let last = observer.handle(.discovery(.removed(name: Self.copyName)), at: at(ms: 50))
        #expect(last.reports.map(\.brief) == ["stations [] vanished \(id.hex) Rooftop: withdrawn"])
    }

    @Test func aCopyFoundFirstIsNotListedUntilTheRealAddressProvesItself() throws {
        var observer = observer()
        var replayer = Peer(address: Self.attacker, publicKey: Fixture.advert.publicKey)
        var station = Fixture.djPeer
        station.sequence = 2_000  // one key, one replay window: the real datagrams come later
        // A fresh process: the copy resolves first, then the real service.
        _ = observer.handle(Self.copied, at: at(ms: 10))
        let real = observer.handle(Fixture.resolved(), at: at(ms: 11))
        let ping = try #require(pings(real, to: Fixture.djAddress).first)
        // The copy replays a snapshot: with two addresses announcing the station, that lists nothing.
        let replayed = observer.handle(snapshot(&replayer, sent: 12), at: at(ms: 12))
        #expect(replayed.reports.isEmpty && observer.summaries(now: at(ms: 12)).isEmpty)
        // The real address answers the ping: the station moves there, and is listed there.
        let proven = observer.handle(pong(&station, echo: LocalTime(ns: ping.clientSendNs)), at: at(ms: 13))
        #expect(observer.watch.directory.entries[id]?.followed == Fixture.djAddress)
        #expect(proven.reports.map(\.brief) == ["stations [Rooftop] appeared \(id.hex)"])
        #expect(observer.summaries(now: at(ms: 13)).map(\.address) == [Fixture.djAddress.host])
    }

    @Test func aListenerStaysWithTheRealAddressWhileACopyComesAndGoes() {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: false),
            verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 10))
        _ = machine.handle(snapshot(&station, sent: 20), at: at(ms: 20))
        #expect(machine.tuned?.djAddress == Fixture.djAddress)
        var out = machine.handle(Self.copied, at: at(ms: 30))
        for ms in stride(from: Int64(100), through: 6_000, by: 250) {
            out += machine.run(until: at(ms: ms), from: at(ms: ms - 250))
            out += machine.handle(snapshot(&station, sent: ms), at: at(ms: ms))
        }
        out += machine.handle(.discovery(.removed(name: Self.copyName)), at: at(ms: 6_010))
        for ms in stride(from: Int64(6_250), through: 9_000, by: 250) {
            out += machine.run(until: at(ms: ms), from: at(ms: ms - 250))
            out += machine.handle(snapshot(&station, sent: ms), at: at(ms: ms))
        }
        // Hellos and heartbeats went to the DJ alone; the copy got time pings and nothing else.
        let toCopy = out.sent.filter { $0.to == .peer(Self.attacker) }
        #expect(!toCopy.isEmpty && toCopy.allSatisfy { $0.message.tag == "timePing" })
        let keepingInTouch = out.sent.filter { ["hello", "heartbeat"].contains($0.message.tag) }
        #expect(keepingInTouch.allSatisfy { $0.to == .peer(Fixture.djAddress) })
        #expect(out.sent.filter { $0.message.tag == "heartbeat" && $0.to == .peer(Fixture.djAddress) }.count >= 5)
        #expect(machine.tuned?.djAddress == Fixture.djAddress && machine.tuned?.silent == false)
        #expect(!out.reportTags.contains("stationSilent") && !machine.isFinished)
    }

    @Test func aServiceThatMovesIsFollowedOnceTheNewAddressAnswers() throws {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: false),
            verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 10))
        _ = machine.handle(snapshot(&station, sent: 20), at: at(ms: 20))
        let moved = PeerAddress(host: Fixture.djAddress.host, port: 40_001)
        let resolved = machine.handle(Fixture.resolved(address: moved), at: at(ms: 300))
        // Not yet: the new address is asked first.
        #expect(machine.tuned?.djAddress == Fixture.djAddress)
        let ping = try #require(pings(resolved, to: moved).first)
        var restarted = Peer(address: moved, publicKey: Fixture.advert.publicKey)
        restarted.sequence = station.sequence + 1_000
        let answered = machine.handle(pong(&restarted, echo: LocalTime(ns: ping.clientSendNs)), at: at(ms: 301))
        #expect(machine.tuned?.djAddress == moved)
        #expect(answered.sent.filter { $0.message.tag == "hello" }.map(\.to) == [.peer(moved)])
    }

    @Test func onDualStackIPv4IsFollowedOverLinkLocalIPv6OnceItAnswers() throws {
        let linkLocal = PeerAddress(host: "fe80::1%eth0", port: 40_000)
        var observer = observer()
        var overIPv6 = Peer(address: linkLocal, publicKey: Fixture.advert.publicKey)
        var overIPv4 = Fixture.djPeer
        // The IPv6 resolution came first and answered; then the service resolves at its IPv4 address.
        _ = observer.handle(Fixture.resolved(address: linkLocal), at: at(ms: 10))
        _ = observer.handle(snapshot(&overIPv6, sent: 11), at: at(ms: 11))
        #expect(observer.summaries(now: at(ms: 11)).map(\.address) == [linkLocal.host])
        let v4 = observer.handle(Fixture.resolved(), at: at(ms: 12))
        let ping = try #require(pings(v4, to: Fixture.djAddress).first)
        overIPv4.sequence = overIPv6.sequence + 10
        _ = observer.handle(pong(&overIPv4, echo: LocalTime(ns: ping.clientSendNs)), at: at(ms: 13))
        #expect(observer.summaries(now: at(ms: 13)).map(\.address) == [Fixture.djAddress.host])
        // A link-local route that answers later never takes the station back from IPv4.
        _ = observer.handle(Fixture.resolved(name: "Rooftop v6", address: linkLocal), at: at(ms: 20))
        let later = observer.run(until: at(ms: 600), from: at(ms: 20))
        let again = try #require(pings(later, to: linkLocal).last)
        overIPv6.sequence = overIPv4.sequence + 10
        _ = observer.handle(pong(&overIPv6, echo: LocalTime(ns: again.clientSendNs)), at: at(ms: 601))
        #expect(observer.watch.directory.entries[id]?.proofs[linkLocal] == again.clientSendNs)  // it did answer
        #expect(observer.summaries(now: at(ms: 601)).map(\.address) == [Fixture.djAddress.host])
    }

    @Test func familiesRankIPv4ThenIPv6ThenLinkLocal() {
        #expect(StationDirectory.rank("10.0.0.1") == 0)
        #expect(StationDirectory.rank("fd99:1::1") == 1)
        #expect(StationDirectory.rank("2001:db8::1") == 1)
        #expect(StationDirectory.rank("fe80::1%eth0") == 2)
        #expect(StationDirectory.rank("FE80::1") == 2)
    }
}
