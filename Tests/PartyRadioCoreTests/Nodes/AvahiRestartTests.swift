import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// avahi-daemon may go away and come back: nodes say so and carry on.
@Suite struct AvahiRestartTests {
    @Test func theDJPlaysOnWhileTheDaemonIsAway() {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        let lost = dj.handle(.discovery(.daemonLost), at: at(ms: 100))
        #expect(lost.reports.map(\.brief).contains("avahi lost") && !dj.isFinished)
        // Snapshots keep going to the group meanwhile.
        let meanwhile = dj.run(until: at(ms: 3_000), from: at(ms: 100))
        #expect(meanwhile.snapshots(to: .group(Fixture.group)).count >= 5)
        let back = dj.handle(.discovery(.daemonBack), at: at(ms: 3_100))
        #expect(back.reports.map(\.brief).contains("avahi back"))
        #expect(
            dj.handle(.discovery(.published(name: "Rooftop")), at: at(ms: 3_200)).reports.map(\.brief).contains(
                "published Rooftop"))
    }

    @Test func aListenerKeepsItsStationWhileTheDaemonIsAway() {
        var listener = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(10), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: true), verifier: ChecksumVerifier())
        _ = listener.handle(.start, at: t0)
        _ = listener.handle(Fixture.resolved(), at: at(ms: 10))
        var dj = Fixture.djPeer
        let snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 20).ns))
        _ = listener.handle(dj.send(.stateSnapshot(snapshot), station: Fixture.stationID), at: at(ms: 20))
        #expect(listener.tuned != nil)
        let lost = listener.handle(.discovery(.daemonLost), at: at(ms: 100))
        #expect(lost.reports.map(\.brief).contains("avahi lost") && !listener.isFinished)
        #expect(listener.tuned?.djAddress == Fixture.djAddress)
        // Snapshots still come over the group: nothing else changes.
        let later = Fixture.snapshot(dj: DJTime(ns: at(ms: 600).ns), positionNs: Nanos.ms(580))
        let heard = listener.handle(dj.send(.stateSnapshot(later), station: Fixture.stationID), at: at(ms: 600))
        #expect(!heard.reports.contains { $0.tag == "stationGone" } && !listener.isFinished)
        // Back: the station is reported again (here at a new port) and followed there once the new
        // address answers the listener's ping with a pong signed by the station's key.
        let back = listener.handle(.discovery(.daemonBack), at: at(ms: 1_000))
        #expect(back.reports.map(\.brief).contains("avahi back"))
        let moved = PeerAddress(host: Fixture.djAddress.host, port: 40_001)
        let resolved = listener.handle(Fixture.resolved(address: moved), at: at(ms: 1_100))
        #expect(listener.tuned?.djAddress.port == 40_000)
        let ping = resolved.sent.first { $0.to == .peer(moved) && $0.message.tag == "timePing" }
        var restarted = Peer(address: moved, publicKey: Fixture.advert.publicKey)
        restarted.sequence = dj.sequence + 100
        _ = listener.handle(
            restarted.send(
                .timePong(TimePong(clientSendNs: at(ms: 1_100).ns, serverReceiveNs: 1, serverSendNs: 2)),
                station: Fixture.stationID), at: at(ms: 1_101))
        #expect(ping != nil && listener.tuned?.djAddress.port == 40_001)
    }
}
