import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// A speaker (a listener machine with ``ListenerMachine/Speaker``) and the DJ's side of it, input by
/// input. The rules, restated (docs/SPEAKERS.md):
/// - a speaker takes a control only from its station's pinned DJ key: another key's, another
///   station's or a replayed one is dropped and counted by reason, and sets nothing;
/// - each setting follows the newest control (by control ID) that named it;
/// - a speaker does not end when its station goes, nor when it finds none;
/// - the DJ keeps its speakers out of its guests and resends a control until the status shows it.
@Suite struct SpeakerMachineTests {
    let id = Fixture.stationID
    static let speakerKey = testKey(0x5A)
    static let djAheadNs = Nanos.seconds(5)

    func dj(_ local: LocalTime) -> DJTime { DJTime(ns: local.ns + Self.djAheadNs) }

    func speaker(query: String? = "Rooftop", kept: SpeakerControlState = SpeakerControlState()) -> ListenerMachine {
        ListenerMachine(
            configuration: .init(
                query: query, timeoutNs: Nanos.ms(2_000), interfaceName: "eth0", listenerName: "Kitchen",
                playsAudio: true,
                speaker: .init(name: "Kitchen", room: "Downstairs", key: Self.speakerKey, kept: kept)),
            verifier: ChecksumVerifier())
    }

    func tunedIn(_ machine: inout ListenerMachine, _ station: inout Peer) -> [Effect] {
        var out = machine.handle(.start, at: t0)
        out += machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10))
        out += machine.handle(Fixture.resolved(), at: at(ms: 20))
        var snapshot = Fixture.snapshot(dj: dj(at(ms: 100)))
        snapshot.sentAtNs = dj(at(ms: 100)).ns
        out += machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: at(ms: 100))
        return out
    }

    func control(_ controlID: UInt64, volume: Int, to key: PublicKey = speakerKey) -> Message {
        .speakerControl(
            SpeakerControl(
                controlID: controlID, target: .speaker(key), fields: .volume, settings: SpeakerSettings(volume: volume))
        )
    }

    func volumes(_ out: [Effect]) -> [Int] { out.player.compactMap { if case .volume(let v) = $0 { v } else { nil } } }

    @Test("a speaker plays at what it kept, and tells the DJ what it is before each hello")
    func statusBeforeHello() {
        var kept = SpeakerControlState()
        _ = kept.apply(
            SpeakerControl(
                controlID: 3, target: .speaker(Self.speakerKey), fields: .all,
                settings: SpeakerSettings(volume: 35, muted: false, delayMs: 120)), key: Self.speakerKey, room: "")
        var machine = speaker(kept: kept)
        var station = Fixture.djPeer
        let out = tunedIn(&machine, &station)
        #expect(volumes(out) == [35])
        #expect(out.player.contains(.delayTrim(Nanos.ms(120))))
        let tags = out.sent.map(\.message.tag)
        let status = tags.firstIndex(of: "speakerStatus")
        #expect(status != nil && status! < tags.firstIndex(of: "hello")!, "\(tags)")
        if case .speakerStatus(let s) = out.sent.first(where: { $0.message.tag == "speakerStatus" })?.message {
            #expect(s.name == "Kitchen" && s.room == "Downstairs" && s.settings.volume == 35 && s.lastControl == 3)
        }
    }

    @Test(
        "only the pinned DJ key sets a speaker: a guest's, another station's and a replayed control are dropped and counted"
    )
    func authority() {
        var machine = speaker()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        // The DJ's: taken, kept, and the status goes back at once.
        let bytes = station.bytes(control(10, volume: 20), station: id)
        let taken = machine.handle(.datagram(bytes, from: Fixture.djAddress), at: at(ms: 200))
        #expect(volumes(taken) == [20])
        #expect(taken.contains { if case .keepSpeaker(let s) = $0 { s.settings.volume == 20 } else { false } })
        #expect(taken.sent.contains { $0.message.tag == "speakerStatus" })
        // A guest signs a control with its own key under this station's ID.
        var guest = Peer("10.0.0.7", key: 7)
        let forged = machine.handle(guest.send(control(11, volume: 90), station: id), at: at(ms: 210))
        // Another station's DJ, with its own key and ID.
        var other = OtherStation.peer
        let foreign = machine.handle(
            other.send(control(12, volume: 90), station: Fixture.otherStationID), at: at(ms: 220))
        // The DJ's own datagram again.
        let replay = machine.handle(.datagram(bytes, from: Fixture.djAddress), at: at(ms: 230))
        // A forger that names the DJ's key in the header but cannot sign with it.
        let impostor = ChecksumSigner(publicKey: testKey(9))
        let named = try! Datagram.encode(
            control(13, volume: 90), stationID: id, sequence: 99_999,
            signer: ForgingSigner(publicKey: Fixture.advert.publicKey, realKey: impostor.publicKey))
        let signedWrong = machine.handle(.datagram(named, from: Fixture.djAddress), at: at(ms: 240))
        #expect(volumes(forged + foreign + replay + signedWrong).isEmpty)
        #expect(machine.speakerState?.settings.volume == 20)
        let drops = machine.filter.drops
        #expect(drops.counts["bad_signature", default: 0] == 2, "\(drops)")
        #expect(drops.counts["wrong_station", default: 0] == 1, "\(drops)")
        #expect(drops.counts["replayed", default: 0] == 1, "\(drops)")
    }

    @Test("the newer control wins: an older one sent again under a new sequence is counted stale")
    func ordering() {
        var machine = speaker()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        _ = machine.handle(station.send(control(50, volume: 60), station: id), at: at(ms: 200))
        let older = machine.handle(station.send(control(40, volume: 10), station: id), at: at(ms: 210))
        #expect(volumes(older).isEmpty)
        #expect(machine.speakerState?.settings.volume == 60)
        #expect(machine.refused.counts[ListenerMachine.staleControl, default: 0] == 1)
        // Another speaker's control is for another speaker.
        let notMine = machine.handle(station.send(control(60, volume: 5, to: testKey(3)), station: id), at: at(ms: 220))
        #expect(volumes(notMine).isEmpty && machine.speakerState?.settings.volume == 60)
    }

    /// The speaker tells its DJ how its output does: a failure at once (not at the next heartbeat),
    /// with no sync error while it fails; the sync error its player measured once it plays again.
    @Test("an output that fails is told to the DJ at once; the sync error while it plays")
    func outputTrouble() {
        var machine = speaker()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        func statuses(_ out: [Effect]) -> [SpeakerStatus] {
            out.sent.compactMap { if case .speakerStatus(let s) = $0.message { s } else { nil } }
        }
        let failed = machine.handle(.output(.failed("the live output stopped (Connection refused)")), at: at(ms: 300))
        let told = statuses(failed)
        #expect(told.count == 1 && told.first?.trouble == "the live output stopped (Connection refused)", "\(told)")
        #expect(told.first?.syncErrorUs == nil)
        let back = machine.handle(.output(.syncError(1_234_000)), at: at(ms: 500))
        #expect(statuses(back).first?.trouble == "", "the trouble is over once it plays: \(statuses(back))")
        #expect(machine.outputTrouble.isEmpty && machine.outputSyncErrorNs == 1_234_000)
        // A file station's track that cannot be played is a trouble too.
        let unplayable = machine.handle(.playerFailed("unsupported codec"), at: at(ms: 600))
        #expect(statuses(unplayable).first?.trouble.contains("unsupported codec") == true)
    }

    /// A speaker tells its DJ its status every 0.5 s while it hears the station (not only with its
    /// 1 s heartbeats): the DJ forgets it 2.5 s after the last one, so a speaker that loses its
    /// power is shown gone within 3 s, while four statuses lost in a row are forgiven.
    @Test("a speaker's status every 0.5 s; the DJ forgets a speaker after 2.5 s, within 3 s of its last word")
    func statusEveryHalfSecond() {
        var machine = speaker()
        var station = Fixture.djPeer
        var out = tunedIn(&machine, &station)
        var sentAt: [Int64] = []
        for ms in stride(from: Int64(200), through: 4_000, by: 50) {
            let now = at(ms: ms)
            if ms % 250 == 0 {
                var snapshot = Fixture.snapshot(dj: dj(now))
                snapshot.sentAtNs = dj(now).ns
                out = machine.handle(station.send(.stateSnapshot(snapshot), station: id), at: now)
            } else {
                out = machine.handle(.timer, at: now)
            }
            if out.sent.contains(where: { $0.message.tag == "speakerStatus" }) { sentAt.append(now.ns) }
        }
        let gaps = zip(sentAt.dropFirst(), sentAt).map { Double($0 - $1) / 1e6 }
        let late = sentAt.filter { $0 >= at(ms: 1_000).ns }
        #expect(late.count >= 5, "statuses from 1 s to 4 s: \(late.count)")
        #expect(gaps.dropFirst().allSatisfy { $0 <= 600 }, "gaps between statuses, ms: \(gaps)")
        #expect(SpeakerBook.timeoutNs + ListenerMachine.speakerStatusIntervalNs <= Nanos.seconds(3))
        #expect(SpeakerBook.timeoutNs >= 4 * ListenerMachine.speakerStatusIntervalNs)
    }

    @Test("a goodbye does not end a speaker: it stops, and plays again when the station is back")
    func ridesOutGoodbye() {
        var machine = speaker()
        var station = Fixture.djPeer
        _ = tunedIn(&machine, &station)
        _ = machine.handle(
            station.send(.goodbye(Goodbye(reason: "The DJ ended the station.")), station: id), at: at(ms: 300))
        #expect(!machine.isFinished && machine.tuned == nil)
        _ = machine.handle(.discovery(.removed(name: Fixture.serviceName)), at: at(ms: 400))
        // Long past its timeout: still waiting, not failed.
        let later = machine.run(until: at(ms: 10_000), from: at(ms: 400))
        #expect(!machine.isFinished && machine.exitError == nil)
        #expect(later.warnings.count <= 1, "\(later.warnings)")
        // The DJ started again.
        var back = Fixture.djPeer
        back.sequence = 1_000_000
        _ = machine.handle(.discovery(.discovered(name: Fixture.serviceName)), at: at(ms: 10_010))
        _ = machine.handle(Fixture.resolved(), at: at(ms: 10_020))
        var snapshot = Fixture.snapshot(dj: dj(at(ms: 10_100)))
        snapshot.sentAtNs = dj(at(ms: 10_100)).ns
        _ = machine.handle(back.send(.stateSnapshot(snapshot), station: id), at: at(ms: 10_100))
        #expect(machine.tuned != nil)
    }

    @Test("with no station on the air a speaker waits instead of exiting")
    func waitsForAStation() {
        var machine = speaker(query: nil)
        _ = machine.handle(.start, at: t0)
        let out = machine.run(until: at(ms: 20_000), from: t0)
        #expect(!machine.isFinished && machine.exitError == nil)
        #expect(out.warnings.count == 1, "\(out.warnings)")
    }

    // MARK: The DJ's side

    func startedDJ() -> DJMachine { Fixture.startedDJ() }

    func status(
        volume: Int = 100, muted: Bool = false, delay: Int = 0, name: String = "Kitchen\u{1b}[2J",
        room: String = "Downstairs"
    ) -> Message {
        .speakerStatus(
            SpeakerStatus(
                name: name, room: room, settings: SpeakerSettings(volume: volume, muted: muted, delayMs: delay),
                playing: true, lastControl: 0))
    }

    @Test("the DJ keeps a speaker apart from its guests, its name cleaned, and lists it when it changes")
    func djKeepsSpeakersApart() {
        var dj = startedDJ()
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        let first = dj.handle(kitchen.send(status(), station: id), at: at(ms: 100))
        let hello = dj.handle(kitchen.send(.hello(Hello(listenerName: "Kitchen")), station: id), at: at(ms: 101))
        #expect(dj.engine.roster.count == 0)
        #expect(hello.snapshots(to: .peer(kitchen.address)).count == 1)
        guard case .speakers(let list) = first.reports.first(where: { $0.tag == "speakers" }) else {
            Issue.record("no speakers event: \(first.reportTags)")
            return
        }
        #expect(list.map(\.name) == ["Kitchen"] && list.first?.room == "Downstairs" && list.first?.host == "10.0.0.5")
        // The same status again changes nothing shown: no event.
        let same = dj.handle(kitchen.send(status(), station: id), at: at(ms: 900))
        #expect(!same.reportTags.contains("speakers"))
        // Silent for 3.5 s: gone.
        let gone = dj.run(until: at(ms: 5_000), from: at(ms: 900))
        #expect(dj.speakers.entries.isEmpty && gone.reportTags.contains("speakers"))
    }

    @Test("a speaker that first said hello as a guest leaves the guests once its status comes")
    func guestBecomesSpeaker() {
        var dj = startedDJ()
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        _ = dj.handle(kitchen.send(.hello(Hello(listenerName: "Kitchen")), station: id), at: at(ms: 100))
        #expect(dj.engine.roster.count == 1)
        _ = dj.handle(kitchen.send(status(), station: id), at: at(ms: 150))
        #expect(dj.engine.roster.count == 0 && dj.speakers.entries.count == 1)
    }

    @Test("'speaker NAME volume N' goes to that speaker, again every 0.5 s until its status shows it")
    func djSendsAndResends() {
        var dj = startedDJ()
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        _ = dj.handle(kitchen.send(status(), station: id), at: at(ms: 100))
        let out = dj.handle(.control("speaker kitchen volume 20"), at: at(ms: 200))
        let sent = out.sent.filter { $0.message.tag == "speakerControl" }
        #expect(sent.map(\.to) == [.peer(kitchen.address)])
        guard case .speakerControl(let control) = sent.first?.message else { return }
        #expect(control.target == .speaker(kitchen.publicKey) && control.fields == .volume)
        #expect(control.settings.volume == 20 && control.controlID >= UInt64(at(ms: 200).ns))
        // No status yet: sent again.
        let again = dj.run(until: at(ms: 750), from: at(ms: 200))
        #expect(again.sent.filter { $0.message.tag == "speakerControl" }.count == 1)
        // The status shows it: no more.
        _ = dj.handle(kitchen.send(status(volume: 20), station: id), at: at(ms: 760))
        let after = dj.run(until: at(ms: 3_000), from: at(ms: 760))
        #expect(after.sent.filter { $0.message.tag == "speakerControl" }.isEmpty)
        // A second control gets a higher ID.
        let next = dj.handle(.control("speaker Kitchen mute on"), at: at(ms: 760))
        if case .speakerControl(let second) = next.sent.first(where: { $0.message.tag == "speakerControl" })?.message {
            #expect(second.controlID > control.controlID && second.fields == .mute && second.settings.muted)
        }
    }

    @Test("a room's control goes to each speaker in it; an unknown name is answered with who there is")
    func roomsAndUnknown() {
        var dj = startedDJ()
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        var hall = Peer("10.0.0.6", key: 0x5B)
        var porch = Peer("10.0.0.8", key: 0x5C)
        _ = dj.handle(kitchen.send(status(name: "Kitchen"), station: id), at: at(ms: 100))
        _ = dj.handle(hall.send(status(name: "Hall"), station: id), at: at(ms: 100))
        _ = dj.handle(porch.send(status(name: "Porch", room: "Outside"), station: id), at: at(ms: 100))
        let out = dj.handle(.control("speaker downstairs delay -120"), at: at(ms: 200))
        let sent = out.sent.filter { $0.message.tag == "speakerControl" }
        #expect(Set(sent.map(\.to)) == [.peer(kitchen.address), .peer(hall.address)])
        #expect(
            sent.allSatisfy {
                if case .speakerControl(let c) = $0.message { c.target == .room("Downstairs") } else { false }
            })
        let unknown = dj.handle(.control("speaker Attic volume 5"), at: at(ms: 300))
        #expect(unknown.sent.isEmpty)
        #expect(unknown.warnings.first?.contains("No speaker or room is called 'Attic'") == true, "\(unknown.warnings)")
        #expect(unknown.warnings.first?.contains("Porch (Outside)") == true)
    }

    /// The speaker keys (the DJ's terminal): `k` picks each speaker by name, then each room, in
    /// the list's order, then none; `]`/`[` step the pick's volume by 10 from what it shows with what
    /// was asked and not yet confirmed (two presses are two steps); `M` flips the mute (a room is
    /// muted when all its speakers are). Without a pick, or with no speakers, they say so.
    @Test("the speaker keys: k picks, ] and [ step the volume, M flips the mute")
    func speakerKeys() {
        var dj = startedDJ()
        let none = dj.handle(.djControl(.speakerKey(.pick)), at: at(ms: 50))
        #expect(none.warnings == ["No speaker is tuned in."])
        var kitchen = Peer("10.0.0.5", key: 0x5A)
        var hall = Peer("10.0.0.6", key: 0x5B)
        _ = dj.handle(kitchen.send(status(volume: 50, name: "Kitchen"), station: id), at: at(ms: 100))
        _ = dj.handle(hall.send(status(volume: 30, name: "Hall"), station: id), at: at(ms: 100))
        func controls(_ out: [Effect]) -> [SpeakerControl] {
            out.sent.compactMap { if case .speakerControl(let c) = $0.message { c } else { nil } }
        }
        let early = dj.handle(.djControl(.speakerKey(.volume(by: 10))), at: at(ms: 150))
        #expect(controls(early).isEmpty && early.warnings.first?.contains("k picks") == true, "\(early.warnings)")
        // The list's order: room, then name: Hall, Kitchen, then the room Downstairs.
        _ = dj.handle(.djControl(.speakerKey(.pick)), at: at(ms: 200))
        #expect(dj.speakerPick == "Hall")
        let up = controls(dj.handle(.djControl(.speakerKey(.volume(by: 10))), at: at(ms: 210)))
        let upAgain = controls(dj.handle(.djControl(.speakerKey(.volume(by: 10))), at: at(ms: 220)))
        #expect(up.map(\.settings.volume) == [40] && upAgain.map(\.settings.volume) == [50], "\(up) \(upAgain)")
        #expect(up.first?.target == .speaker(hall.publicKey))
        _ = dj.handle(.djControl(.speakerKey(.pick)), at: at(ms: 300))
        #expect(dj.speakerPick == "Kitchen")
        let down = controls(dj.handle(.djControl(.speakerKey(.volume(by: -10))), at: at(ms: 310)))
        #expect(down.map(\.settings.volume) == [40] && down.first?.target == .speaker(kitchen.publicKey))
        _ = dj.handle(.djControl(.speakerKey(.pick)), at: at(ms: 400))
        #expect(dj.speakerPick == "Downstairs")
        let mute = controls(dj.handle(.djControl(.speakerKey(.toggleMute)), at: at(ms: 410)))
        #expect(
            mute.count == 2
                && mute.allSatisfy { $0.target == .room("Downstairs") && $0.settings.muted && $0.fields == .mute })
        // Both muted now (as asked): M again unmutes.
        let unmute = controls(dj.handle(.djControl(.speakerKey(.toggleMute)), at: at(ms: 420)))
        #expect(unmute.count == 2 && unmute.allSatisfy { !$0.settings.muted }, "\(unmute)")
        let last = dj.handle(.djControl(.speakerKey(.pick)), at: at(ms: 500))
        #expect(dj.speakerPick == nil && last.notices.first?.contains("no speaker") == true, "\(last.notices)")
    }

    @Test("out of range, the DJ's line is refused with the range")
    func lineRanges() throws {
        #expect(throws: ControlError("A speaker's volume is 0 to 100; 101 is out of range.")) {
            try DJControl.parse(line: "speaker Kitchen volume 101")
        }
        #expect(throws: ControlError("A speaker's delay trim is -500 to +500 ms; -501 is out of range.")) {
            try DJControl.parse(line: "speaker Kitchen delay -501")
        }
        #expect(throws: ControlError.self) { try DJControl.parse(line: "speaker Kitchen mute maybe") }
        #expect(throws: ControlError.self) { try DJControl.parse(line: "speaker volume 5") }
        #expect(try DJControl.parse(line: "speaker Living Room mute on") == .speaker("Living Room", .mute(true)))
        #expect(try DJControl.parse(line: "SPEAKER Kitchen delay 500") == .speaker("Kitchen", .delay(500)))
    }
}
