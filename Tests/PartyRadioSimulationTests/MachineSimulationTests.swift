import NodeTestSupport
import PartyRadioCore
import Testing

/// One hostile machine with many addresses (issue 27, attacks 3 and 4), on the simulated LAN: the
/// real DJ, listeners and guests' one-shot machines, each guest on an address of its own but all
/// on one machine, as the DJ's runtime finds it in the neighbour table (``SimNode/machineID``).
@Suite struct MachineSimulationTests {
    static let start: Int64 = 1_000_000_000_000
    static let hostile = MachineID.linkLayer("02:00:00:00:00:66")

    struct Party {
        let lan: SimLAN
        let dj: SimNode
        let verifier = ChecksumVerifier(seal: nil)

        init(seed: UInt64) {
            lan = SimLAN(seed: seed, faults: SimFaults())
            let key = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
            let id = StationID(rawValue: 0x1234_5678_9ABC_DEF0)
            let advert = StationAdvert(stationID: id, group: id.multicastGroup, publicKey: key)
            let track = Track(
                id: "long", title: "Long", artist: "DJ", album: "", durationMs: 120_000, source: "http://10.9.0.1/0")
            dj = lan.addDJ(
                name: "Aliases", advert: advert, queue: [track, track], crowdSkipPercent: 50, verifier: verifier,
                key: key, startNs: MachineSimulationTests.start)
            lan.schedule(at: MachineSimulationTests.start, .input(dj.index, .start))
        }

        var machine: DJMachine? { if case .dj(let m) = dj.machine { m } else { nil } }

        /// A guest's machine running `guest`, with a fresh key (from `n`), started at `at`.
        @discardableResult
        func guest(_ name: String, _ guest: SimMachine, key n: Int, on machine: MachineID?, at: Int64) -> SimNode {
            let key = PublicKey(
                bytes: [0x5A, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + [UInt8](repeating: 1, count: 29))!
            let node = lan.add(name: name, machine: guest, key: key, offsetNs: 0, driftPPM: 0)
            node.machineID = machine
            lan.schedule(at: at, .input(node.index, .start))
            return node
        }

        func listener(_ n: Int, at: Int64) {
            guest(
                "listener\(n)",
                .listener(
                    ListenerMachine(
                        configuration: .init(
                            query: "Aliases", timeoutNs: 10_000_000_000, interfaceName: "sim0",
                            listenerName: "real\(n)", playsAudio: false),
                        verifier: verifier)), key: 4000 + n, on: nil, at: at)
        }
    }

    @Test("64 fresh keys on 64 addresses of one machine are one voter, and make no crowd skip")
    func aliasesAreOneVoter() throws {
        let party = Party(seed: 27)
        party.listener(1, at: Self.start + 500_000_000)
        party.listener(2, at: Self.start + 600_000_000)
        for n in 0..<64 {
            party.guest(
                "alias\(n)",
                .voter(
                    GuestExchange(
                        GuestVote(.down), station: nil, timeoutNs: 5_000_000_000, interfaceName: "sim0",
                        verifier: party.verifier)), key: n, on: Self.hostile,
                at: Self.start + 2_000_000_000 + Int64(n) * 10_000_000)
        }
        party.lan.run(until: Self.start + 20_000_000_000)
        let dj = try #require(party.machine)
        #expect(dj.engine.votes.tally == Tally(up: 0, down: 1), "one machine, one voter")
        #expect(dj.engine.roster.count == 2)
        #expect(dj.engine.nowPlaying?.id == "long" && dj.engine.index == 0, "no crowd skip")
        let skips = party.dj.reports.filter { if case .trackSkipped = $0.event { true } else { false } }
        #expect(skips.isEmpty)
    }

    @Test("500 chat lines from fresh keys on one machine's aliases: its rate, and the real guests' lines stay")
    func chatFromAliasesIsLimitedPerMachine() throws {
        let party = Party(seed: 28)
        for n in 0..<500 {
            let send = ChatSend(messageID: UInt64(n + 1), name: "spam\(n)", text: "buy now \(n)")
            party.guest(
                "spam\(n)",
                .chatter(
                    GuestExchange(
                        GuestChat(send), station: nil, timeoutNs: 3_000_000_000, interfaceName: "sim0",
                        verifier: party.verifier)), key: n, on: Self.hostile,
                at: Self.start + 2_000_000_000 + Int64(n) * 6_000_000)
        }
        for n in 0..<3 {
            let send = ChatSend(messageID: UInt64(n + 1), name: "Ann", text: "real line \(n)")
            party.guest(
                "ann\(n)",
                .chatter(
                    GuestExchange(
                        GuestChat(send), station: nil, timeoutNs: 3_000_000_000, interfaceName: "sim0",
                        verifier: party.verifier)), key: 3000, on: .linkLayer("02:00:00:00:00:01"),
                at: Self.start + 2_500_000_000 + Int64(n) * 1_000_000_000)
        }
        party.lan.run(until: Self.start + 8_000_000_000)
        let dj = try #require(party.machine)
        let texts = dj.chat.lines.map(\.text)
        #expect(texts.filter { $0.hasPrefix("buy now") }.count == ChatBook.rateLimit)
        #expect(texts.filter { $0.hasPrefix("real line") }.count == 3, "\(texts)")
    }
}
