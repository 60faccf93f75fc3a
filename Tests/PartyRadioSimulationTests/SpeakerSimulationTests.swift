import NodeTestSupport
import PartyRadioCore
import Testing

/// Speakers on the simulated LAN (issue 29; docs/SPEAKERS.md): the real DJ and speaker machines on
/// a network that loses, duplicates, delays and reorders, the DJ given `speaker …` lines, and a
/// guest and a second station's DJ sending speakers controls of their own, besides copies of the
/// DJ's datagrams and old controls sent again under new sequence numbers. The rules, restated here
/// from what the run sent, never asked of the machines:
/// - authority: only the station's DJ key sets a speaker; every other control is dropped and
///   counted (a guest's as `bad_signature`, another station's as `wrong_station`, a copy as
///   `replayed`);
/// - ordering: each of a speaker's settings ends at the value of the DJ control with the highest ID
///   that named it and was addressed to that speaker (its key or its room), and the speaker's
///   player plays at it (0 when muted);
/// - the DJ lists its speakers apart from its guests, each as its last status says.
@Suite struct SpeakerSimulationTests {
    static let start: Int64 = 1_000_000_000_000
    static let second: Int64 = 1_000_000_000

    struct Outcome {
        var violations: [String] = []
        var forgedSent = 0
        var stale = 0
    }

    static func run(seed: UInt64, faults: SimFaults) -> Outcome {
        let lan = SimLAN(seed: seed, faults: faults)
        let verifier = ChecksumVerifier(seal: nil)
        let djKey = PublicKey(bytes: [UInt8](repeating: 9, count: 32))!
        let id = StationID(rawValue: 0x2929_2929_2929_2929)
        let advert = StationAdvert(stationID: id, group: id.multicastGroup, publicKey: djKey)
        let tracks = (0..<5).map {
            Track(
                id: "t\($0)", title: "T\($0)", artist: "A", album: "", durationMs: 60_000,
                source: "http://10.9.0.1/\($0)")
        }
        let dj = lan.addDJ(
            name: "Party", advert: advert, queue: tracks, crowdSkipPercent: 0, verifier: verifier, key: djKey,
            startNs: start)
        lan.schedule(at: start, .input(dj.index, .start))

        struct Spec {
            var name: String
            var room: String
            var seed: UInt8
        }
        let specs = [
            Spec(name: "Kitchen", room: "Downstairs", seed: 0x51), Spec(name: "Hall", room: "Downstairs", seed: 0x52),
            Spec(name: "Porch", room: "Outside", seed: 0x53),
        ]
        var speakers: [(spec: Spec, key: PublicKey, node: SimNode)] = []
        for (n, spec) in specs.enumerated() {
            let key = PublicKey(bytes: [UInt8](repeating: spec.seed, count: 32))!
            let node = lan.add(
                name: spec.name,
                machine: .listener(
                    ListenerMachine(
                        configuration: .init(
                            query: "Party", timeoutNs: 10 * second, interfaceName: "sim0", listenerName: spec.name,
                            playsAudio: true, speaker: .init(name: spec.name, room: spec.room, key: key)),
                        verifier: verifier)),
                key: key, offsetNs: Int64(n + 1) * 700_000_000, driftPPM: 50 * Double(n))
            lan.schedule(at: start + 200_000_000 * Int64(n + 1), .input(node.index, .start))
            speakers.append((spec, key, node))
        }
        let guestKey = PublicKey(bytes: [UInt8](repeating: 0x61, count: 32))!
        let guest = lan.add(
            name: "guest",
            machine: .listener(
                ListenerMachine(
                    configuration: .init(
                        query: "Party", timeoutNs: 10 * second, interfaceName: "sim0", listenerName: "Bob",
                        playsAudio: false),
                    verifier: verifier)), key: guestKey, offsetNs: -300_000_000, driftPPM: -80)
        lan.schedule(at: start + 300_000_000, .input(guest.index, .start))
        // Another station's DJ on the same LAN.
        let otherKey = PublicKey(bytes: [UInt8](repeating: 0x71, count: 32))!
        let otherID = StationID(rawValue: 0x7171_7171_7171_7171)
        let other = lan.addDJ(
            name: "Elsewhere",
            advert: StationAdvert(stationID: otherID, group: otherID.multicastGroup, publicKey: otherKey),
            queue: tracks, crowdSkipPercent: 0, verifier: verifier, key: otherKey, startNs: start)
        lan.schedule(at: start, .input(other.index, .start))

        // The DJ's lines, some close together (reordered on the way), each setting several times.
        var random = SplitMix64(seed: seed)
        let names = ["Kitchen", "Hall", "Porch", "Downstairs", "Outside"]
        var at = start + 4 * second
        for _ in 0..<30 {
            let who = names[Int(random.next() % UInt64(names.count))]
            let line: String =
                switch random.next() % 3 {
                case 0: "speaker \(who) volume \(random.next() % 101)"
                case 1: "speaker \(who) mute \(random.next() % 2 == 0 ? "on" : "off")"
                default: "speaker \(who) delay \(Int(random.next() % 1001) - 500)"
                }
            let control = try! DJControl.parse(line: line)
            lan.schedule(at: at, .input(dj.index, .djControl(control)))
            at += Int64(random.next() % 400_000_000)  // 0–400 ms apart: some meet on the way
        }
        let lastLine = at

        // What the DJ sent, and the DJ's controls that reached Kitchen (for copies and old controls).
        var issued: [SpeakerControl] = []
        var captured: [(bytes: [UInt8], control: SpeakerControl)] = []
        lan.observer = { node, effects in
            guard node === dj else { return }
            for case .send(.speakerControl(let control), _, _) in effects where !issued.contains(control) {
                issued.append(control)
            }
        }
        lan.datagramObserver = { node, arrival in
            guard node === speakers[0].node, captured.count < 30,
                let datagram = try? Datagram.decode(arrival.bytes), datagram.header.sender == djKey,
                datagram.header.stationID == id, case .speakerControl(let control) = datagram.message
            else { return }
            captured.append((arrival.bytes, control))
        }

        // The attacks, every 300 ms from the first line on: a guest's control, another station's,
        // a copy of one of the DJ's datagrams, and an old control of the DJ's re-signed under a new
        // sequence number (the DJ's own key: only ordering can refuse it).
        var outcome = Outcome()
        var sequence: UInt64 = 1
        let djSigner = ChecksumSigner(publicKey: djKey)
        lan.hooks[1] = {
            for target in speakers {
                let forged = SpeakerControl(
                    controlID: .max, target: .speaker(target.key), fields: .all,
                    settings: SpeakerSettings(volume: 1, muted: false, delayMs: 499))
                sequence += 1
                let byGuest = try! Datagram.encode(
                    .speakerControl(forged), stationID: id, sequence: UInt64(lan.now) + sequence,
                    signer: ChecksumSigner(publicKey: guestKey))
                let byOther = try! Datagram.encode(
                    .speakerControl(forged), stationID: otherID, sequence: UInt64(lan.now) + sequence,
                    signer: ChecksumSigner(publicKey: otherKey))
                lan.send(byGuest, from: guest, to: .peer(target.node.address))
                lan.send(byOther, from: other, to: .peer(target.node.address))
                outcome.forgedSent += 2
            }
            if let copy = captured.first {
                lan.send(copy.bytes, from: dj, to: .peer(speakers[0].node.address))
            }
            for field in [SpeakerControl.Fields.volume, .mute, .delay] {
                // The oldest control that set this, again, in a datagram numbered above anything the DJ sent so far.
                guard let oldest = captured.first(where: { $0.control.fields.contains(field) })?.control else {
                    continue
                }
                sequence += 1
                let bytes = try! Datagram.encode(
                    .speakerControl(oldest), stationID: id, sequence: UInt64(dj.local(lan.now).ns) + 500 + sequence,
                    signer: djSigner)
                lan.send(bytes, from: dj, to: .peer(speakers[0].node.address))
            }
        }
        var t = start + 4 * second
        while t < lastLine + 2 * second {
            lan.schedule(at: t, .hook(1))
            t += 300_000_000
        }
        lan.run(until: lastLine + 8 * second)

        // The rule, worked out from what the DJ sent: per speaker and setting, the control with the
        // highest ID that named it and was addressed to it.
        for speaker in speakers {
            var expected = SpeakerSettings()
            var ids: (volume: UInt64, mute: UInt64, delay: UInt64) = (0, 0, 0)
            for control in issued {
                switch control.target {
                case .speaker(let key): guard key == speaker.key else { continue }
                case .room(let room): guard room.lowercased() == speaker.spec.room.lowercased() else { continue }
                }
                if control.fields.contains(.volume), control.controlID > ids.volume {
                    ids.volume = control.controlID
                    expected.volume = control.settings.volume
                }
                if control.fields.contains(.mute), control.controlID > ids.mute {
                    ids.mute = control.controlID
                    expected.muted = control.settings.muted
                }
                if control.fields.contains(.delay), control.controlID > ids.delay {
                    ids.delay = control.controlID
                    expected.delayMs = control.settings.delayMs
                }
            }
            guard case .listener(let machine) = speaker.node.machine else { continue }
            let have = machine.speakerState?.settings
            if have != expected {
                outcome.violations.append(
                    "\(speaker.spec.name): \(String(describing: have)), the DJ's newest: \(expected)")
            }
            let player = expected.muted ? 0 : expected.volume
            if speaker.node.playerVolume != player || speaker.node.delayTrimNs != Int64(expected.delayMs) * 1_000_000 {
                outcome.violations.append(
                    "\(speaker.spec.name)'s player at volume \(speaker.node.playerVolume), trim \(speaker.node.delayTrimNs) ns; "
                        + "expected \(player), \(expected.delayMs) ms")
            }
            if speaker.node.kept.last?.state.settings != expected {
                outcome.violations.append(
                    "\(speaker.spec.name) kept \(String(describing: speaker.node.kept.last?.state))")
            }
            let drops = machine.filter.drops.counts
            if drops["bad_signature", default: 0] == 0 || drops["wrong_station", default: 0] == 0 {
                outcome.violations.append("\(speaker.spec.name) counted no forged control: \(drops)")
            }
            outcome.stale += machine.refused.counts[ListenerMachine.staleControl, default: 0]
        }
        if case .listener(let kitchen) = speakers[0].node.machine,
            kitchen.filter.drops.counts["replayed", default: 0] == 0
        {
            outcome.violations.append("Kitchen counted no replay")
        }
        guard case .dj(let machine) = dj.machine else { return outcome }
        let listed = machine.speakers.list
        if Set(listed.map(\.name)) != Set(specs.map(\.name)) {
            outcome.violations.append("the DJ lists \(listed.map(\.name))")
        }
        if machine.engine.roster.entries.keys.contains(where: { key in speakers.contains { $0.key == key } }) {
            outcome.violations.append("a speaker is among the DJ's guests")
        }
        for entry in listed {
            guard let speaker = speakers.first(where: { $0.key == entry.key }),
                case .listener(let m) = speaker.node.machine
            else { continue }
            if entry.settings != m.speakerState?.settings {
                outcome.violations.append(
                    "the DJ shows \(entry.name) at \(entry.settings), it is at \(String(describing: m.speakerState?.settings))"
                )
            }
        }
        return outcome
    }

    @Test(
        "authority, ordering and replay on a clean link and through loss, duplication and reordering",
        arguments: [(UInt64(1), 0.0, 0.0, 0.0), (2, 0.1, 0.1, 0.05), (3, 0.2, 0.1, 0.1), (4, 0.15, 0.05, 0.2)])
    func speakerControls(seed: UInt64, loss: Double, duplicate: Double, spike: Double) {
        let outcome = Self.run(seed: seed, faults: SimFaults(loss: loss, duplicate: duplicate, spike: spike))
        #expect(outcome.violations.isEmpty, "seed \(seed): \(outcome.violations.prefix(6))")
        #expect(outcome.forgedSent > 0)
        // The old controls re-signed under new numbers reached Kitchen and were refused as stale.
        #expect(outcome.stale > 0, "seed \(seed)")
    }
}
