import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// `partyradio stations` and the station watch under it: listed once heard, gone when silent,
/// withdrawn or said goodbye, settled after the first sweep.
@Suite struct ObserverMachineTests {
    let id = Fixture.stationID

    func started() -> ObserverMachine {
        var observer = ObserverMachine(verifier: ChecksumVerifier())
        #expect(observer.nextWakeup == nil)
        #expect(observer.handle(.start, at: t0).browses == 1)
        return observer
    }

    func snapshot(_ station: inout Peer, name: String = "Rooftop", tally: Tally = Tally(), sent: Int64 = 1) -> NodeInput
    {
        var s = Fixture.snapshot(name: name, dj: DJTime(ns: 1), tally: tally)
        s.sentAtNs = sent
        let stationID = name == "Rooftop" ? Fixture.stationID : Fixture.otherStationID
        return station.send(.stateSnapshot(s), station: stationID)
    }

    /// The `stationsChanged` reports, briefly.
    func changes(_ effects: [Effect]) -> [String] {
        effects.reports.filter { $0.tag == "stationsChanged" }.map(\.brief)
    }

    @Test func aStationIsListedOnlyOnceHeard() {
        var observer = started()
        var station = Fixture.djPeer
        let resolved = observer.handle(Fixture.resolved(), at: at(ms: 20))
        #expect(resolved.sent.map(\.message.tag) == ["query"])
        #expect(resolved.sent.first?.to == .peer(Fixture.djAddress))
        #expect(resolved.reports.isEmpty)
        #expect(observer.summaries(now: at(ms: 20)).isEmpty)
        #expect(observer.nextWakeup == at(ms: 520))  // the next query

        let heard = observer.handle(snapshot(&station), at: at(ms: 100))
        #expect(changes(heard) == ["stations [Rooftop] appeared \(id.hex)"])
        let summary = observer.summaries(now: at(ms: 100)).first
        #expect(summary?.id == id && summary?.address == "10.0.0.1" && summary?.port == 40_000)
        #expect(summary?.serviceName == "Rooftop" && summary?.advert == Fixture.advert)
    }

    @Test func onlyWhatAUserSeesCountsAsAnUpdate() {
        var observer = started()
        var station = Fixture.djPeer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(snapshot(&station, sent: 1), at: at(ms: 100))
        #expect(changes(observer.handle(snapshot(&station, sent: 2), at: at(ms: 200))).isEmpty)
        let votes = observer.handle(snapshot(&station, tally: Tally(up: 1, down: 0), sent: 3), at: at(ms: 300))
        #expect(changes(votes) == ["stations [Rooftop] updated \(id.hex)"])
    }

    @Test func aStationVanishesAfter2500msOfSilenceAndReturnsWhenHeard() {
        var observer = started()
        var station = Fixture.djPeer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(snapshot(&station), at: at(ms: 100))
        let quiet = observer.run(until: at(ms: 2_600), from: at(ms: 100))
        #expect(changes(quiet).isEmpty)  // 2.5 s exactly is not yet silence
        #expect(quiet.sent.filter { $0.message.tag == "query" }.count == 5)  // still asking: 520, 1020, … 2520 ms

        let gone = observer.run(until: at(ms: 2_700), from: at(ms: 2_600))
        #expect(changes(gone) == ["stations [] vanished \(id.hex) Rooftop: went silent"])
        #expect(observer.summaries(now: at(ms: 2_700)).isEmpty)

        let back = observer.handle(snapshot(&station), at: at(ms: 3_000))
        #expect(changes(back) == ["stations [Rooftop] appeared \(id.hex)"])
    }

    @Test func goodbyeRemovesAStationUntilItIsResolvedAgain() {
        var observer = started()
        var station = Fixture.djPeer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(snapshot(&station), at: at(ms: 100))
        let bye = observer.handle(station.send(.goodbye(Goodbye(reason: "done")), station: id), at: at(ms: 200))
        #expect(changes(bye) == ["stations [] vanished \(id.hex) Rooftop: went off air"])
        // Its stragglers are from a station no longer known.
        _ = observer.handle(snapshot(&station), at: at(ms: 210))
        #expect(observer.summaries(now: at(ms: 210)).isEmpty)
        #expect(observer.filter.drops.counts == ["wrong_station": 1])
        #expect(observer.nextWakeup == nil)  // nothing left to watch
    }

    @Test func withdrawalRemovesAStation() {
        var observer = started()
        var station = Fixture.djPeer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(snapshot(&station), at: at(ms: 100))
        let removed = observer.handle(.discovery(.removed(name: Fixture.serviceName)), at: at(ms: 200))
        #expect(changes(removed) == ["stations [] vanished \(id.hex) Rooftop: withdrawn"])
        // Withdrawing a station never heard changes nothing the user sees.
        _ = observer.handle(OtherStation.resolved, at: at(ms: 300))
        #expect(changes(observer.handle(.discovery(.removed(name: "Basement")), at: at(ms: 310))).isEmpty)
    }

    @Test func stationsAreListedByName() {
        var observer = started()
        var rooftop = Fixture.djPeer
        var basement = OtherStation.peer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(OtherStation.resolved, at: at(ms: 20))
        _ = observer.handle(snapshot(&rooftop), at: at(ms: 100))
        let both = observer.handle(snapshot(&basement, name: "Basement"), at: at(ms: 110))
        #expect(changes(both) == ["stations [Basement, Rooftop] appeared \(Fixture.otherStationID.hex)"])
    }

    @Test func settledOnceTheSweepIsDoneAndEveryStationAnsweredOrHadThreeRounds() {
        var empty = started()
        _ = empty.handle(.discovery(.allForNow), at: at(ms: 150))
        #expect(empty.settled)  // no stations: nothing to wait for

        var observer = started()
        var rooftop = Fixture.djPeer
        _ = observer.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        _ = observer.handle(.discovery(.discovered(name: "Basement")), at: at(ms: 10))
        _ = observer.handle(.discovery(.allForNow), at: at(ms: 15))
        #expect(!observer.settled)  // two services still being resolved
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(.discovery(.unresolved(name: "Basement")), at: at(ms: 30))
        #expect(!observer.settled)  // Rooftop has not answered
        _ = observer.handle(snapshot(&rooftop), at: at(ms: 100))
        #expect(observer.settled)

        var waiting = started()
        _ = waiting.handle(OtherStation.resolved, at: at(ms: 20))  // never answers
        _ = waiting.handle(.discovery(.allForNow), at: at(ms: 30))
        _ = waiting.run(until: at(ms: 1_520), from: at(ms: 30))
        #expect(!waiting.settled)
        #expect(waiting.nextWakeup == at(ms: 1_520) + 1)
        _ = waiting.run(until: at(ms: 1_521), from: at(ms: 1_520))
        #expect(waiting.settled)
    }

    @Test func datagramsFromUnknownStationsAndListenersAreDroppedByReason() {
        var observer = started()
        var station = Fixture.djPeer
        var stranger = OtherStation.peer
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(snapshot(&stranger, name: "Basement"), at: at(ms: 30))  // not resolved
        _ = observer.handle(station.send(.hello(Hello(listenerName: "me")), station: id), at: at(ms: 40))
        _ = observer.handle(.datagram([0x50, 0x52, 1], from: Fixture.djAddress), at: at(ms: 50))
        #expect(observer.filter.drops.counts == ["wrong_station": 1, "unexpected_sender": 1, "truncated": 1])
        #expect(observer.summaries(now: at(ms: 50)).isEmpty)
    }

    @Test func aBadTXTRecordIsIgnored() {
        var observer = started()
        let bad = observer.handle(
            .discovery(.resolved(name: "Broken", address: "10.0.0.9", port: 1, txt: ["v=1", "id=zz"])), at: at(ms: 20))
        #expect(bad.sent.isEmpty)
        #expect(bad.contains { if case .log(.discovery, let text) = $0 { text.contains("bad TXT") } else { false } })
        #expect(observer.watch.directory.entries.isEmpty)
    }

    @Test func aBadTXTRecordIsCounted() {
        var observer = started()
        for ms: Int64 in [20, 30] {
            _ = observer.handle(
                .discovery(.resolved(name: "Broken", address: "10.0.0.9", port: 1, txt: ["v=1", "id=zz"])),
                at: at(ms: ms))
        }
        #expect(observer.watch.drops.counts == ["bad_advert": 2])
        #expect(observer.drops.counts == ["bad_advert": 2])
    }

    /// Records of a DNS domain left out (told once while they stay so, by the runtime's browser)
    /// are counted by reason, beside the datagrams dropped, and logged; nothing is listed for them.
    @Test func recordsOfADomainLeftOutAreCountedByReason() {
        var observer = started()
        var out: [Effect] = []
        for (name, reason) in [
            ("Killed", DomainDrop.leasePassed), ("Garbled", .badLease), ("Broken", .badSRV), ("Killed 2", .leasePassed),
            ("Six", .noUsableAddress), ("Odd", .badTXT), ("Odd", .badAddress), ("x.", .badPTR),
        ] {
            out += observer.handle(.discovery(.refused(name: name, reason: reason)), at: at(ms: 20))
        }
        #expect(
            observer.watch.drops.counts == [
                "dns_lease_passed": 2, "dns_bad_lease": 1, "dns_bad_srv": 1, "dns_no_usable_address": 1,
                "dns_bad_txt": 1, "dns_bad_address": 1, "dns_bad_ptr": 1,
            ])
        #expect(out.sent.isEmpty && out.reports.isEmpty && observer.watch.directory.entries.isEmpty)
        let logged = out.compactMap { if case .log(.discovery, let text) = $0 { text } else { nil } }
        #expect(logged.first == "DNS domain: leaving out 'Killed': a lease that has passed (dns_lease_passed)")
        #expect(logged.contains { $0.hasPrefix("DNS domain: 'Odd' has a malformed TXT string") })
        // A datagram dropped adds to the same counters.
        _ = observer.handle(.datagram([1, 2, 3], from: Fixture.djAddress), at: at(ms: 30))
        #expect(observer.drops.total == 9 && observer.filter.drops.total == 1)
    }

    /// Derives IDs like the real one does (from the key alone): the fixture's key owns the fixture's ID.
    struct DerivingVerifier: DatagramVerifier {
        func verify(_ datagram: Datagram) -> Bool { ChecksumVerifier().verify(datagram) }
        func stationID(for key: PublicKey) -> StationID? {
            key == Fixture.advert.publicKey ? Fixture.stationID : StationID(rawValue: FNV1a64.hash(key.bytes))
        }
    }

    @Test func anAdvertWhoseIDIsNotItsKeysIsRefusedAndCounted() {
        var observer = ObserverMachine(verifier: DerivingVerifier())
        _ = observer.handle(.start, at: t0)
        // The impostor shows first: the real station's ID with the attacker's key, its own address.
        let impostor = StationAdvert(stationID: id, group: Fixture.group, publicKey: testKey(0x66))
        let refused = observer.handle(
            Fixture.resolved(name: "Rooftop (2)", advert: impostor, address: PeerAddress(host: "10.0.0.66", port: 9)),
            at: at(ms: 10))
        #expect(refused.sent.isEmpty && observer.watch.directory.entries.isEmpty)
        #expect(observer.watch.drops.counts == ["impostor_advert": 1])
        #expect(
            refused.contains { if case .log(.discovery, let text) = $0 { text.contains("refused") } else { false } })
        // The real one is believed, and the impostor again changes nothing.
        _ = observer.handle(Fixture.resolved(), at: at(ms: 20))
        _ = observer.handle(
            Fixture.resolved(name: "Rooftop (2)", advert: impostor, address: PeerAddress(host: "10.0.0.66", port: 9)),
            at: at(ms: 30))
        #expect(observer.watch.directory.entries[id]?.address == Fixture.djAddress.host)
        #expect(observer.watch.policy == .stations([id: Fixture.advert.publicKey]))
        #expect(observer.watch.drops.total == 2)
    }

    @Test func aWatchThatStopsQueryingOnlyListens() {
        var watch = StationWatch()
        var out: [Effect] = []
        _ = watch.handle(
            .resolved(name: "Rooftop", address: "10.0.0.1", port: 40_000, txt: Fixture.advert.txtRecord), into: &out)
        #expect(watch.policy == .stations([id: Fixture.advert.publicKey]))
        _ = watch.tick(now: at(ms: 0), into: &out)
        #expect(out.sent.count == 1)
        watch.isQuerying = false
        out.removeAll()
        _ = watch.tick(now: at(ms: 600), into: &out)
        #expect(out.sent.isEmpty)
        #expect(watch.nextWakeup == nil)  // nothing heard, nothing to ask
    }

    @Test func quitAndDiscoveryFailureEndIt() {
        var quitting = started()
        #expect(quitting.handle(.quit, at: at(ms: 10)).isEmpty)
        #expect(quitting.isFinished && quitting.exitError == nil && quitting.nextWakeup == nil)

        var failing = started()
        _ = failing.handle(.discovery(.failed("no avahi")), at: at(ms: 10))
        #expect(failing.isFinished && failing.exitError?.code == .discovery)
    }
}
