import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Thousands of random inputs per machine from a seed: valid, replayed, corrupted and random
/// datagrams, DNS-SD events, commands, player failures, catalog answers and timers. Whatever
/// comes, a machine must not trap, must not ask to be woken before the instant it just handled
/// (a runtime would spin), and must keep each answer small.
@Suite struct NodeMachinePropertyTests {
    static let seeds: [UInt64] = [1, 2, 3]
    static let steps = 3_000

    @Test(arguments: seeds) func djMachine(seed: UInt64) {
        var fuzz = InputFuzzer(seed: seed, role: .dj)
        let reached = fuzz.exercise(steps: Self.steps) { now in
            DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: now)
        }
        #expect(
            reached.isSuperset(of: ["listenersChanged", "voteCounted", "queued", "stationStopped", "load"]),
            "reached only \(reached.sorted())")
    }

    @Test(arguments: seeds) func listenerMachine(seed: UInt64) {
        let reached = Self.fuzzListener(seed: seed)
        #expect(
            reached.isSuperset(of: ["tunedIn", "stationSilent", "stationGone"]), "reached only \(reached.sorted())")
    }

    /// Synchronising takes eight pongs within one session, which random input reaches in some
    /// seeds' runs and not others: across the seeds, the fuzz must get there and load the player.
    @Test func listenerFuzzReachesSynchronisedPlayback() {
        let reached = Self.seeds.reduce(into: Set<String>()) { $0.formUnion(Self.fuzzListener(seed: $1)) }
        #expect(reached.isSuperset(of: ["synchronised", "load"]), "reached only \(reached.sorted())")
    }

    static func fuzzListener(seed: UInt64) -> Set<String> {
        var fuzz = InputFuzzer(seed: seed, role: .station)
        return fuzz.exercise(
            steps: 2 * Self.steps, marks: { $0.clock.isSynchronized ? ["synchronised"] : [] },
            make: { _ in
                ListenerMachine(
                    configuration: .init(
                        query: seed % 2 == 0 ? nil : "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0",
                        listenerName: "fuzz", playsAudio: true),
                    verifier: ChecksumVerifier())
            })
    }

    @Test(arguments: seeds) func voterMachine(seed: UInt64) {
        var fuzz = InputFuzzer(seed: seed, role: .station)
        // A long timeout: with no query the voter waits for the sweep, and needs time left to vote.
        let reached = fuzz.exercise(
            steps: Self.steps, marks: { $0.result != nil ? ["result"] : [] },
            make: { _ in
                GuestExchange(
                    GuestVote(.up), station: seed % 2 == 0 ? nil : "Rooftop", timeoutNs: Nanos.seconds(20),
                    interfaceName: "eth0", verifier: ChecksumVerifier())
            })
        #expect(reached.isSuperset(of: ["sent vote", "result"]), "reached only \(reached.sorted())")
    }

    @Test(arguments: seeds) func observerMachine(seed: UInt64) {
        var fuzz = InputFuzzer(seed: seed, role: .station)
        let reached = fuzz.exercise(
            steps: Self.steps, marks: { $0.settled ? ["settled"] : [] },
            make: { _ in ObserverMachine(verifier: ChecksumVerifier()) })
        #expect(reached.isSuperset(of: ["stationsChanged", "settled"]), "reached only \(reached.sorted())")
    }

    /// `doctor`'s clock probe: whatever arrives, it ends with an outcome and never spins.
    @Test(arguments: seeds) func clockProbeMachine(seed: UInt64) {
        var fuzz = InputFuzzer(seed: seed, role: .station)
        let reached = fuzz.exercise(
            steps: Self.steps,
            marks: { probe in
                switch probe.outcome {
                case .noStation?: ["no station"]
                case .silent?, .noPong?: ["no answer"]
                case .measured?: ["measured"]
                case .failed?: ["failed"]
                case nil: []
                }
            },
            make: { _ in ClockProbeMachine(verifier: ChecksumVerifier()) })
        #expect(!reached.isDisjoint(with: ["no station", "no answer", "failed", "measured"]), "\(reached.sorted())")
    }
}

/// Makes the random inputs and checks the machine after each.
struct InputFuzzer {
    /// Whose datagrams the machine mostly gets: listeners' (a DJ) or stations' (everyone else).
    enum Role { case dj, station }

    static let maxEffects = 64

    private var random: SeededGenerator
    private let role: Role
    private var now = t0
    private var listeners = (0..<4).map { Peer("10.0.1.\($0)", port: 50_000 + UInt16($0), key: 0x10 + UInt8($0)) }
    private var rooftop = Fixture.djPeer
    private var basement = OtherStation.peer
    private var recent: [([UInt8], PeerAddress)] = []
    private var lastPing: LocalTime?
    /// How many handles in a row may leave a wakeup before their instant (0: none may).
    private let pastWakeupsInARow: Int
    private var pastWakeups = 0
    private var reached: Set<String> = []

    init(seed: UInt64, role: Role, pastWakeupsInARow: Int = 0) {
        random = SeededGenerator(seed: seed)
        self.role = role
        self.pastWakeupsInARow = pastWakeupsInARow
    }

    // MARK: Running

    /// Feeds `steps` inputs to machines made by `make`, a new one whenever the last finished.
    /// Returns what the runs reached, so a test can tell they went deep: the report tags, "load"
    /// for a player load, "error <code>" for exit errors, and whatever `marks` says of the machine.
    mutating func exercise<M: NodeMachine>(
        steps: Int, marks: (M) -> [String] = { _ in [] }, make: (LocalTime) -> M
    ) -> Set<String> {
        var machine = make(now)
        var restarts = 0
        reached = []
        guard check(&machine, .start, "start") else { return reached }
        for step in 0..<steps {
            reached.formUnion(marks(machine))
            if machine.isFinished {
                if let error = machine.exitError { reached.insert("error \(error.code.rawValue)") }
                #expect(machine.nextWakeup == nil, "a finished machine wants a wakeup")
                #expect(machine.handle(.timer, at: now).isEmpty, "a finished machine still acts")
                restarts += 1
                machine = make(now)
                guard check(&machine, .start, "start") else { return reached }
                continue
            }
            let inputAt = now + jump()
            // A runtime that keeps its contract delivers the timer no later than asked (give or take
            // its own scheduling jitter) before an input that arrives afterwards.
            var timers = 0
            while let wake = machine.nextWakeup, wake <= inputAt, !machine.isFinished, timers < 1_000 {
                now = max(wake, now) + Int64(int(0...2_000_000))
                timers += 1
                guard check(&machine, .timer, "step \(step): timer due at \(wake.ns - t0.ns)") else { return reached }
            }
            if timers == 1_000 {
                Issue.record("step \(step): 1000 timers without reaching \(inputAt.ns - t0.ns) ns")
                return reached
            }
            if machine.isFinished { continue }
            now = max(now, inputAt)
            let (input, label) = nextInput()
            guard check(&machine, input, "step \(step): \(label)") else { return reached }
        }
        #expect(restarts < steps / 10, "the machines finished too often to be explored: \(restarts)")
        return reached
    }

    /// Handles one input at `now`; false (and an issue recorded) if the machine broke a rule.
    private mutating func check<M: NodeMachine>(_ machine: inout M, _ input: NodeInput, _ label: String) -> Bool {
        let effects = machine.handle(input, at: now)
        reached.formUnion(effects.reportTags)
        reached.formUnion(effects.messages.map { "sent \($0.tag)" })
        if effects.player.contains(where: { if case .load = $0 { true } else { false } }) { reached.insert("load") }
        for case .send(.timePing(let ping), _, _) in effects { lastPing = LocalTime(ns: ping.clientSendNs) }
        var ok = true
        if effects.count >= Self.maxEffects {
            Issue.record("\(label): \(effects.count) effects at once")
            ok = false
        }
        if let wake = machine.nextWakeup, wake < now {
            pastWakeups += 1
            if pastWakeups > pastWakeupsInARow {
                Issue.record("\(label): at \(now.ns - t0.ns) ns it asks to be woken at \(wake.ns - t0.ns) ns")
                ok = false
            }
        } else {
            pastWakeups = 0
        }
        return ok
    }

    // MARK: Inputs

    /// How long until the next input.
    private mutating func jump() -> Int64 {
        switch int(0...19) {
        case 0...13: Int64(int(0...50_000_000))
        case 14...18: Int64(int(0...1_000_000_000))
        // Now and then a long silence: several tracks end, listeners fall silent, stations expire.
        default: chance(0.2) ? Int64(int(0...60_000_000_000)) : Int64(int(0...3_000_000_000))
        }
    }

    private mutating func nextInput() -> (NodeInput, String) {
        switch int(0...99) {
        case 0..<30: return (.timer, "timer")
        case 30..<70: return datagram()
        case 70..<82:
            let event = discovery()
            return (.discovery(event), "discovery \(event)")
        case 82..<92:
            let line = pick([
                "next", "prev", "pause", "resume", "toggle", "seek 5", "seek -3", "seek 1e12", "seek 9.99", "seek x",
                "search daft punk", "add 1 2,3", "add", "", "   ", "bogus", "p", "n", "PLAY",
            ])
            // A line the DJ could not type (no control) is a timer; listeners get theirs besides.
            if chance(0.3) {
                let control = pick([ListenerControl.mute, .unmute, .toggleMute, .volume(.to(40)), .vote(.down)])
                return (.listenerControl(control), "listener control \(control)")
            }
            guard let control = try? DJControl.parse(line: line) else { return (.timer, "line '\(line)' refused") }
            return (.djControl(control), "control '\(control)'")
        case 92..<94: return (.playerFailed("fuzz"), "playerFailed")
        case 94..<96:
            let tracks = (0..<int(0...2)).map { n in
                Track(id: "new\(n)", title: "N", artist: "", album: "", durationMs: 5_000, source: "http://n/\(n)")
            }
            return chance(0.5)
                ? (.libraryRescanned(new: tracks, gone: int(0...2), warnings: []), "library rescanned")
                : (.webSearch("n", ticket: 1), "web search")
        case 96..<99:
            let tracks = (0..<int(0...3)).map { n in
                Track(
                    id: "c\(n)", title: "C", artist: "", album: "", durationMs: UInt32(pick([0, 5_000, 180_000])),
                    source: "http://c/\(n)")
            }
            return chance(0.5)
                ? (.catalog(.tracks(tracks, failure: chance(0.3) ? "partly" : nil)), "catalog tracks")
                : (.catalog(.results(term: "x", tracks: tracks)), "catalog results")
        default:
            return chance(0.3) ? (.quit, "quit") : (.timer, "timer")
        }
    }

    private mutating func discovery() -> DiscoveryEvent {
        let name = pick([Fixture.serviceName, "Basement", "Nowhere"])
        switch int(0...19) {
        case 0...3: return .discovered(name: name)
        case 4...10:
            let (advert, address) =
                chance(0.7) ? (Fixture.advert, Fixture.djAddress) : (OtherStation.advert, OtherStation.address)
            let port = chance(0.1) ? address.port + 1 : address.port
            let txt = chance(0.1) ? ["v=1", "id=nothex"] : advert.txtRecord
            return .resolved(name: name, address: address.host, port: port, txt: txt)
        case 11: return .unresolved(name: name)
        // A withdrawal ends a listener, so it comes rarely enough for sessions to get deep.
        case 12: return chance(0.05) ? .removed(name: name) : .allForNow
        case 13...15: return .allForNow
        case 16: return .published(name: name)
        case 17: return .renamed(from: name, to: name + " #2")
        case 18: return chance(0.05) ? .failed("fuzz") : .allForNow
        default: return .discovered(name: name)
        }
    }

    private mutating func datagram() -> (NodeInput, String) {
        switch int(0...9) {
        case 0 where !recent.isEmpty:
            let (bytes, from) = pick(recent)
            return (.datagram(bytes, from: from), "replayed datagram")
        case 1 where !recent.isEmpty:
            var (bytes, from) = pick(recent)
            for _ in 0..<int(1...3) where !bytes.isEmpty { bytes[int(0...(bytes.count - 1))] ^= UInt8(int(1...255)) }
            return (.datagram(bytes, from: from), "corrupted datagram")
        case 2 where !recent.isEmpty:
            let (bytes, from) = pick(recent)
            return (.datagram(Array(bytes.prefix(int(0...bytes.count))), from: from), "truncated datagram")
        case 3:
            let bytes = (0..<int(0...300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return (.datagram(bytes, from: PeerAddress(host: "10.0.9.9", port: 9)), "random bytes")
        default:
            let fromStation = role == .station ? chance(0.85) : chance(0.1)
            let bytes: [UInt8]
            let from: PeerAddress
            let message: Message
            if fromStation && chance(0.85) {
                message = stationMessage(name: "Rooftop")
                bytes = rooftop.bytes(message, station: Fixture.stationID)
                from = rooftop.address
            } else if fromStation {
                message = stationMessage(name: "Basement")
                bytes = basement.bytes(message, station: Fixture.otherStationID)
                from = basement.address
            } else {
                let index = int(0...(listeners.count - 1))
                message = listenerMessage()
                bytes = listeners[index].bytes(
                    message, station: chance(0.9) ? Fixture.stationID : Fixture.otherStationID)
                from = listeners[index].address
            }
            recent.append((bytes, from))
            if recent.count > 16 { recent.removeFirst() }
            return (.datagram(bytes, from: from), "\(message.tag) from \(from)")
        }
    }

    /// What a DJ sends: snapshots around now, acks, pongs (mostly plausible), rarely a goodbye.
    private mutating func stationMessage(name: String) -> Message {
        switch int(0...19) {
        case 0...8:
            let track = pick([Fixture.tracks[0], Fixture.tracks[1], nil] as [Track?])
            let dj = DJTime(ns: now.ns + Int64(int(-5_000_000...5_000_000)) + Nanos.seconds(2))
            var snapshot = Fixture.snapshot(
                name: name, track: track, dj: dj, positionNs: Int64(int(0...12_000)) * Nanos.perMillisecond,
                paused: chance(0.2),
                tally: Tally(up: UInt32(int(0...3)), down: 0), listeners: UInt32(int(0...5)))
            snapshot.sentAtNs = dj.ns
            return .stateSnapshot(snapshot)
        case 9...11:
            let status = pick([VoteAck.Status.counted, .counted, .staleTrack, .noTrack])
            return .voteAck(
                VoteAck(
                    voteSequence: 1, status: status, trackID: pick(["t0", "t1", "t2"]), choice: .up,
                    tally: Tally(up: 1, down: 0), listenerCount: 1))
        case 12...18:
            let sent =
                chance(0.8) ? (lastPing ?? now) : LocalTime(ns: now.ns + Int64(int(-2_000_000_000...2_000_000_000)))
            let djReceive = sent.ns + Nanos.seconds(2) + Int64(int(0...2_000_000))
            return .timePong(
                TimePong(clientSendNs: sent.ns, serverReceiveNs: djReceive, serverSendNs: djReceive + 50_000))
        default:
            return .goodbye(Goodbye(reason: "fuzz"))
        }
    }

    /// What listeners, voters and observers send.
    private mutating func listenerMessage() -> Message {
        switch int(0...9) {
        case 0...1: return .hello(Hello(listenerName: pick(["", "kitchen", String(repeating: "é", count: 40)])))
        case 2...3: return .heartbeat(Heartbeat())
        case 4: return .leave(Leave())
        case 5...6: return .vote(Vote(trackID: pick(["t0", "t1", "t2", "c0", ""]), choice: pick(VoteChoice.allCases)))
        case 7: return .query(Query())
        default: return .timePing(TimePing(clientSendNs: now.ns - Int64(int(0...5_000_000))))
        }
    }

    // MARK: Random helpers

    private mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    private mutating func chance(_ p: Double) -> Bool { random.unit() < p }

    private mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}
