import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Listeners off the multicast group (they found the DJ in a unicast DNS-SD domain, beyond a
/// router): the DJ copies what it sends the group to each of them by unicast, for as long as they
/// keep asking.
@Suite struct UnicastListenersTests {
    let id = Fixture.stationID
    let group = Destination.group(Fixture.group)

    func started() -> DJMachine { Fixture.startedDJ() }

    /// The return cookie `peer` reads in the DJ's answer to its time ping (as a listener gets it).
    func cookie(_ dj: inout DJMachine, _ peer: inout Peer, at time: LocalTime) -> UInt64? {
        let out = dj.handle(peer.send(.timePing(TimePing(clientSendNs: time.ns)), station: id), at: time)
        return out.sent.compactMap { sent -> UInt64? in
            guard sent.to == .peer(peer.address), case .timePong(let pong) = sent.message else { return nil }
            return pong.cookie
        }.first
    }

    /// A listener that looked for the station in a unicast DNS-SD domain, started and resolved.
    func offLinkListener() -> ListenerMachine {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "far",
                playsAudio: false, wantsUnicast: true),
            verifier: ChecksumVerifier())
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        return machine
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
        let farCookie = cookie(&dj, &far, at: at(ms: 90))
        _ = dj.handle(
            far.send(.hello(Hello(listenerName: "far", wantsUnicast: true, cookie: farCookie)), station: id),
            at: at(ms: 100))
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
        out = dj.handle(.control("next"), at: at(ms: 2_300))
        #expect(out.sent.filter { if case .trackSkipped = $0.message { $0.to == toFar } else { false } }.count == 2)
        out = dj.handle(
            near.send(.chatSend(ChatSend(messageID: 1, name: "near", text: "hi")), station: id), at: at(ms: 2_400))
        #expect(out.sent.filter { if case .chatLine = $0.message { $0.to == toFar } else { false } }.count == 2)
    }

    @Test func heartbeatsKeepItAndSilenceOrLeaveEndIt() {
        var dj = started()
        var far = Peer("10.99.13.2", key: 7)
        let farCookie = cookie(&dj, &far, at: at(ms: 90))
        _ = dj.handle(
            far.send(.heartbeat(Heartbeat(wantsUnicast: true, cookie: farCookie)), station: id), at: at(ms: 100))
        #expect(dj.unicastListeners.addresses == [far.address])
        // Once in, its heartbeats from the same address keep it, cookie or not.
        for second in 1...5 {
            _ = dj.handle(
                far.send(.heartbeat(Heartbeat(wantsUnicast: true)), station: id), at: at(ms: Int64(second) * 1_000))
        }
        #expect(dj.unicastListeners.addresses == [far.address])
        _ = dj.run(until: at(ms: 9_000), from: at(ms: 5_000))
        #expect(dj.unicastListeners.entries.isEmpty, "3.5 s without a heartbeat and the copies stop")
        let quiet = dj.run(until: at(ms: 10_000), from: at(ms: 9_000))
        #expect(snapshots(quiet, to: .peer(far.address)) == 0)

        let again = cookie(&dj, &far, at: at(ms: 10_050))
        _ = dj.handle(
            far.send(.hello(Hello(listenerName: "far", wantsUnicast: true, cookie: again)), station: id),
            at: at(ms: 10_100))
        #expect(!dj.unicastListeners.entries.isEmpty)
        _ = dj.handle(far.send(.leave(Leave()), station: id), at: at(ms: 10_200))
        #expect(dj.unicastListeners.entries.isEmpty)
        // A heartbeat that no longer asks (the listener is on the group's link now) ends it too.
        _ = dj.handle(
            far.send(.hello(Hello(listenerName: "far", wantsUnicast: true, cookie: again)), station: id),
            at: at(ms: 10_300))
        #expect(!dj.unicastListeners.entries.isEmpty)
        _ = dj.handle(far.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 10_400))
        #expect(dj.unicastListeners.entries.isEmpty)
    }

    @Test func theBookIsBoundedAndDropsTheLeastRecentlyHeard() {
        var book = UnicastListeners()
        for n in 0..<(UnicastListeners.capacity + 10) {
            let address = PeerAddress(host: "10.1.0.\(n)", port: 1)
            let now = at(ms: Int64(n))
            book.heard(
                testKey(UInt8(n)), at: address, wantsUnicast: true,
                cookie: book.cookie(for: testKey(UInt8(n)), at: address, now: now), now: now)
        }
        #expect(book.entries.count == UnicastListeners.capacity)
        #expect(book.entries[testKey(0)] == nil && book.entries[testKey(UInt8(UnicastListeners.capacity + 9))] != nil)
    }

    @Test func aListenerLookingInADomainAsksInItsHelloAndHeartbeats() {
        var machine = offLinkListener()
        var station = Fixture.djPeer
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

    /// A guest that forges the source address of a hello or heartbeat (to point the copies at
    /// another machine) cannot show that address's cookie: the pongs with it went there, not to it.
    @Test func aForgedSourceAddressGetsNoCopies() {
        var dj = started()
        var guest = Peer("10.99.13.66", key: 9)
        let own = cookie(&dj, &guest, at: at(ms: 50))
        #expect(own != nil)
        // The same key, so its sequence numbers go on from the guest's (the replay window is the key's).
        var forged = Peer(address: PeerAddress(host: "10.99.13.200", port: 53), publicKey: guest.publicKey)
        forged.sequence = guest.sequence + 10
        _ = dj.handle(forged.send(.hello(Hello(listenerName: "x", wantsUnicast: true)), station: id), at: at(ms: 100))
        _ = dj.handle(
            forged.send(.heartbeat(Heartbeat(wantsUnicast: true, cookie: own)), station: id), at: at(ms: 200))
        _ = dj.handle(
            forged.send(.heartbeat(Heartbeat(wantsUnicast: true, cookie: 0x1234)), station: id), at: at(ms: 300))
        #expect(dj.unicastListeners.entries.isEmpty)
        #expect(dj.unicastListeners.refused == 3)
        let out = dj.run(until: at(ms: 2_000), from: at(ms: 300))
        #expect(out.sent.allSatisfy { $0.to != .peer(forged.address) })

        // Admitted at its own address, the guest cannot move its copies to another one either.
        guest.sequence = forged.sequence + 10
        forged.sequence = guest.sequence + 10
        _ = dj.handle(
            guest.send(.heartbeat(Heartbeat(wantsUnicast: true, cookie: own)), station: id), at: at(ms: 2_100))
        #expect(dj.unicastListeners.addresses == [guest.address])
        _ = dj.handle(
            forged.send(.heartbeat(Heartbeat(wantsUnicast: true, cookie: own)), station: id), at: at(ms: 2_200))
        #expect(dj.unicastListeners.addresses == [guest.address])
    }

    @Test func aCookieIsTheKeysAtTheAddressForTwoEpochs() {
        let book = UnicastListeners(secret: (1, 2))
        let address = PeerAddress(host: "10.99.13.2", port: 4000)
        let key = testKey(7)
        let now = at(ms: 1_000)
        let cookie = book.cookie(for: key, at: address, now: now)
        #expect(book.isValid(cookie, for: key, at: address, now: now))
        #expect(book.isValid(cookie, for: key, at: address, now: now + UnicastListeners.cookieEpochNs))
        #expect(!book.isValid(cookie, for: key, at: address, now: now + 2 * UnicastListeners.cookieEpochNs))
        #expect(!book.isValid(cookie, for: testKey(8), at: address, now: now))
        #expect(!book.isValid(cookie, for: key, at: PeerAddress(host: "10.99.13.2", port: 4001), now: now))
        #expect(!book.isValid(cookie, for: key, at: PeerAddress(host: "10.99.13.3", port: 4000), now: now))
        // Another run of the DJ (another secret) makes other cookies.
        #expect(!UnicastListeners(secret: (1, 3)).isValid(cookie, for: key, at: address, now: now))
        #expect(UnicastListeners(secret: (1, 2)).isValid(cookie, for: key, at: address, now: now))
        // Epochs before the run's start (local times below 0) are whole epochs too.
        let early = LocalTime(ns: -1)
        #expect(
            book.isValid(book.cookie(for: key, at: address, now: early), for: key, at: address, now: LocalTime(ns: 0)))
    }

    /// The listener shows the cookie of each pong that brings a new one, at once, and in every
    /// hello and heartbeat after it.
    @Test func aListenerShowsItsCookieAtOnce() {
        var machine = offLinkListener()
        var station = Fixture.djPeer
        var snapshot = Fixture.snapshot(dj: DJTime(ns: at(ms: 100).ns))
        snapshot.sentAtNs = at(ms: 100).ns
        _ = machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
        let pong = TimePong(clientSendNs: at(ms: 100).ns, serverReceiveNs: 0, serverSendNs: 0, cookie: 42)
        var out = machine.handle(station.send(.timePong(pong), station: id), at: at(ms: 110))
        #expect(out.messages.contains(.heartbeat(Heartbeat(wantsUnicast: true, cookie: 42))))
        out = machine.handle(station.send(.timePong(pong), station: id), at: at(ms: 120))
        #expect(
            !out.messages.contains { if case .heartbeat = $0 { true } else { false } }, "the same cookie: nothing new")
        out = machine.run(until: at(ms: 6_000), from: at(ms: 120))
        let shown = out.messages.compactMap { message -> UInt64?? in
            switch message {
            case .hello(let hello): hello.cookie
            case .heartbeat(let beat): beat.cookie
            default: nil
            }
        }
        #expect(!shown.isEmpty && shown.allSatisfy { $0 == 42 })
    }

    /// SipHash-2-4's reference vectors (the paper's appendix: key 00 01 … 0f, messages 00 01 … of
    /// each length).
    @Test func sipHashMatchesTheReferenceVectors() {
        let k0: UInt64 = 0x0706_0504_0302_0100
        let k1: UInt64 = 0x0f0e_0d0c_0b0a_0908
        #expect(SipHash24.hash(k0: k0, k1: k1, []) == 0x726f_db47_dd0e_0e31)
        #expect(SipHash24.hash(k0: k0, k1: k1, [0]) == 0x74f8_39c5_93dc_67fd)
        #expect(SipHash24.hash(k0: k0, k1: k1, Array(0..<8)) == 0x93f5_f579_9a93_2462)
        #expect(SipHash24.hash(k0: k0, k1: k1, Array(0..<15)) == 0xa129_ca61_49be_45e5)
    }

    @Test func theCookieIsAnOptionalEnd() throws {
        // A pong without it is what listeners before it read; with it, 8 bytes more.
        var plain = ByteWriter()
        TimePong(clientSendNs: 1, serverReceiveNs: 2, serverSendNs: 3).encode(into: &plain)
        var withCookie = ByteWriter()
        TimePong(clientSendNs: 1, serverReceiveNs: 2, serverSendNs: 3, cookie: 7).encode(into: &withCookie)
        #expect(withCookie.bytes.count == plain.bytes.count + 8)
        var reader = ByteReader(withCookie.bytes)
        #expect(try TimePong(from: &reader).cookie == 7)
        reader = ByteReader(plain.bytes)
        #expect(try TimePong(from: &reader).cookie == nil)
        // In a heartbeat it follows the flags byte, and only with the unicast bit.
        var beat = ByteWriter()
        Heartbeat(wantsUnicast: true, cookie: 9).encode(into: &beat)
        #expect(beat.bytes == [1, 0, 0, 0, 0, 0, 0, 0, 9])  // network order, as every integer
        reader = ByteReader(beat.bytes)
        #expect(try Heartbeat(from: &reader) == Heartbeat(wantsUnicast: true, cookie: 9))
        #expect(Heartbeat(wantsUnicast: false, cookie: 9).cookie == nil)
        reader = ByteReader([1, 9, 0])
        #expect(throws: WireError.self) { try Heartbeat(from: &reader) }
        let signer = ChecksumSigner(publicKey: testKey(3))
        let hello = Hello(listenerName: "far", wantsUnicast: true, cookie: 0xDEAD_BEEF)
        let bytes = try Datagram.encode(.hello(hello), stationID: id, sequence: 9, signer: signer)
        #expect(try Datagram.decode(bytes).message == .hello(hello))
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
        // Reserved bits are ignored (bit 1 is a heartbeat's live loss count, LiveResendTests); the
        // round trip goes through the whole datagram.
        reader = ByteReader([0xFC])
        #expect(try !Heartbeat(from: &reader).wantsUnicast)
        let signer = ChecksumSigner(publicKey: testKey(3))
        let bytes = try Datagram.encode(
            .hello(Hello(listenerName: "far", wantsUnicast: true)), stationID: id, sequence: 9, signer: signer)
        #expect(try Datagram.decode(bytes).message == .hello(Hello(listenerName: "far", wantsUnicast: true)))
    }
}
