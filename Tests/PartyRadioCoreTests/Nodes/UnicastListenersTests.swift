import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Listeners off the multicast group (they found the DJ in a unicast DNS-SD domain, beyond a
/// router): the DJ copies what it sends the group to each of them by unicast, for as long as they
/// keep asking.
@Suite struct UnicastListenersTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)

    func started() -> DJMachine {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    func snapshots(_ effects: [Effect], to destination: Destination) -> Int {
        effects.sent.filter {
            if case .stateSnapshot = $0.message { $0.to == destination } else { false }
        }.count
    }

    @Test func aListenerThatAsksGetsTheGroupsMessagesByUnicast() {
        var dj = started()
        var far = Peer("10.99.13.2", key: 7)
        var near = Peer("10.99.11.3", key: 8)
        _ = dj.handle(far.send(.hello(Hello(listenerName: "far", wantsUnicast: true)), station: id), at: at(ms: 100))
        _ = dj.handle(near.send(.hello(Hello(listenerName: "near")), station: id), at: at(ms: 100))
        #expect(dj.unicastListeners.addresses == [far.address])

        // Periodic snapshots, the roster and the list of what plays next: to the group and to `far`.
        var out = dj.run(until: at(ms: 2_200), from: at(ms: 100))
        let toFar = Destination.peer(far.address)
        #expect(snapshots(out, to: group) >= 4)
        #expect(snapshots(out, to: toFar) == snapshots(out, to: group))
        #expect(snapshots(out, to: .peer(near.address)) == 0)
        #expect(out.sent.contains { if case .roster = $0.message { $0.to == toFar } else { false } })
        #expect(out.sent.contains { if case .queueList = $0.message { $0.to == toFar } else { false } })

        // A skip notice and a chat line go both ways too.
        out = dj.handle(.command("next"), at: at(ms: 2_300))
        #expect(out.sent.filter { if case .trackSkipped = $0.message { $0.to == toFar } else { false } }.count == 2)
        out = dj.handle(
            near.send(.chatSend(ChatSend(messageID: 1, name: "near", text: "hi")), station: id), at: at(ms: 2_400))
        #expect(out.sent.filter { if case .chatLine = $0.message { $0.to == toFar } else { false } }.count == 2)
    }

    @Test func heartbeatsKeepItAndSilenceOrLeaveEndIt() {
        var dj = started()
        var far = Peer("10.99.13.2", key: 7)
        _ = dj.handle(far.send(.heartbeat(Heartbeat(wantsUnicast: true)), station: id), at: at(ms: 100))
        #expect(dj.unicastListeners.addresses == [far.address])
        for second in 1...5 {
            _ = dj.handle(
                far.send(.heartbeat(Heartbeat(wantsUnicast: true)), station: id), at: at(ms: Int64(second) * 1_000))
        }
        _ = dj.run(until: at(ms: 9_000), from: at(ms: 5_000))
        #expect(dj.unicastListeners.entries.isEmpty, "3.5 s without a heartbeat and the copies stop")
        let quiet = dj.run(until: at(ms: 10_000), from: at(ms: 9_000))
        #expect(snapshots(quiet, to: .peer(far.address)) == 0)

        _ = dj.handle(far.send(.hello(Hello(listenerName: "far", wantsUnicast: true)), station: id), at: at(ms: 10_100))
        #expect(!dj.unicastListeners.entries.isEmpty)
        _ = dj.handle(far.send(.leave(Leave()), station: id), at: at(ms: 10_200))
        #expect(dj.unicastListeners.entries.isEmpty)
        // A heartbeat that no longer asks (the listener is on the group's link now) ends it too.
        _ = dj.handle(far.send(.hello(Hello(listenerName: "far", wantsUnicast: true)), station: id), at: at(ms: 10_300))
        _ = dj.handle(far.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 10_400))
        #expect(dj.unicastListeners.entries.isEmpty)
    }

    @Test func theBookIsBoundedAndDropsTheLeastRecentlyHeard() {
        var book = UnicastListeners()
        for n in 0..<(UnicastListeners.capacity + 10) {
            book.heard(
                testKey(UInt8(n)), at: PeerAddress(host: "10.1.0.\(n)", port: 1), wantsUnicast: true,
                now: at(ms: Int64(n)))
        }
        #expect(book.entries.count == UnicastListeners.capacity)
        #expect(book.entries[testKey(0)] == nil && book.entries[testKey(UInt8(UnicastListeners.capacity + 9))] != nil)
    }

    @Test func aListenerLookingInADomainAsksInItsHelloAndHeartbeats() {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "far",
                playsAudio: false, wantsUnicast: true),
            verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        var snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 100).ns))
        var out: [Effect] = []
        // The DJ's snapshots every half second (they answer the hello; the heartbeats follow).
        for ms in stride(from: Int64(100), to: 3_000, by: 500) {
            snapshot.sentAtNs = at(ms: ms).ns
            out += machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: ms))
            out += machine.run(until: at(ms: ms + 500), from: at(ms: ms))
        }
        let hellos = out.messages.compactMap { if case .hello(let hello) = $0 { hello } else { nil } }
        let beats = out.messages.compactMap { if case .heartbeat(let beat) = $0 { beat } else { nil } }
        #expect(!hellos.isEmpty && hellos.allSatisfy(\.wantsUnicast))
        #expect(!beats.isEmpty && beats.allSatisfy(\.wantsUnicast))
    }

    @Test func theFlagIsAnOptionalLastByte() throws {
        var plain = ByteWriter()
        Hello(listenerName: "a").encode(into: &plain)
        var flagged = ByteWriter()
        Hello(listenerName: "a", wantsUnicast: true).encode(into: &flagged)
        // Without the flag the hello is what DJs before it read; with it, one byte more.
        #expect(flagged.bytes == plain.bytes + [1])
        var reader = ByteReader(flagged.bytes)
        #expect(try Hello(from: &reader).wantsUnicast)
        reader = ByteReader(plain.bytes)
        #expect(try !Hello(from: &reader).wantsUnicast)
        var beat = ByteWriter()
        Heartbeat(wantsUnicast: true).encode(into: &beat)
        reader = ByteReader(beat.bytes)
        #expect(beat.bytes == [1])
        #expect(try Heartbeat(from: &reader).wantsUnicast)
        // Reserved bits are ignored; the round trip goes through the whole datagram.
        reader = ByteReader([0xFE])
        #expect(try !Heartbeat(from: &reader).wantsUnicast)
        let signer = ChecksumSigner(publicKey: testKey(3))
        let bytes = try Datagram.encode(
            .hello(Hello(listenerName: "far", wantsUnicast: true)), stationID: id, sequence: 9, signer: signer)
        #expect(try Datagram.decode(bytes).message == .hello(Hello(listenerName: "far", wantsUnicast: true)))
    }
}
