import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The driver on its own, with a scripted machine and ports that only record: no loop, no sockets,
/// no root. Each test states the driver's rule and checks what the machine and the ports saw.
@Suite struct NodeDriverTests {
    static let station = StationID(rawValue: 0x0102_0304_0506_0708)
    static let group = station.multicastGroup
    static let peer = PeerAddress(host: "10.0.0.2", port: 4000)

    /// A machine that records every input it is handed, with its instant, and answers each with
    /// what `answer` says; a batch goes through the protocol's own `handle(batch:)`.
    struct ScriptedMachine: NodeMachine {
        var handled: [(input: String, at: LocalTime)] = []
        var wakeup: LocalTime?
        var finishOn: String?
        var isFinished = false
        var exitError: NodeError? { nil }
        var answer: (NodeInput) -> [Effect] = { _ in [] }

        var nextWakeup: LocalTime? { wakeup }

        static func name(_ input: NodeInput) -> String {
            switch input {
            case .start: "start"
            case .datagram(let bytes, _, _): "datagram \(bytes.first ?? 0)"
            case .timer: "timer"
            case .quit: "quit"
            default: "other"
            }
        }

        mutating func handle(_ input: NodeInput, at now: LocalTime) -> [Effect] {
            handled.append((Self.name(input), now))
            if Self.name(input) == finishOn { isFinished = true }
            if case .timer = input { wakeup = nil }
            return answer(input)
        }
    }

    /// Ports that record what reached them; the clock is set by the test.
    final class RecordingPorts: NodePorts {
        var clock = LocalTime(ns: 1_000_000_000)
        var realTime: Int64 = 1_700_000_000_000_000_000
        var families: [AddressFamily] = [.ipv4]
        var joinFails = false
        var calls: [String] = []
        var sent: [[UInt8]] = []

        func now() -> LocalTime { clock }
        func realTimeNs() -> Int64 { realTime }
        func send(_ datagram: [UInt8], to destination: Destination) {
            sent.append(datagram)
            calls.append("send")
        }
        func joinGroup(_ group: MulticastGroup) throws(NodeError) -> [AddressFamily] {
            calls.append("join")
            if joinFails { throw NodeError(.network, "no interface can join \(group)") }
            return families
        }
        func publish(name: String, port: UInt16, txt: [String]) { calls.append("publish \(name)") }
        func browse(resolving name: String?) { calls.append("browse") }
        func drivePlayer(_ command: PlayerCommand) { calls.append("player") }
        func follow(_ view: StationClockView) { calls.append("follow") }
        func ask(_ request: CatalogRequest) { calls.append("ask") }
        func save(_ station: SavedStation) { calls.append("save") }
        func record(_ play: PlayRecord) { calls.append("record") }
        func pin(name: String, key: PublicKey) { calls.append("pin") }
        func report(_ event: NodeEvent) { calls.append("report") }
        func log(_ topic: Log.Topic, _ message: String) { calls.append("log") }
        func webReply(ticket: UInt64, _ reply: WebReply) { calls.append("web") }
    }

    static let key = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
    static let saved = SavedStation(
        queue: [], index: 0, interlude: nil, positionNs: 0, paused: false, repeatMode: .all, volume: 100,
        votes: VoteBook(trackID: ""), requests: RequestBook(), chat: ChatBook())

    static func driver(
        _ machine: ScriptedMachine = ScriptedMachine(), ports: RecordingPorts = RecordingPorts(),
        seal: (any StationSeal)? = nil
    ) -> NodeDriver<ScriptedMachine> {
        let outbox = Outbox(
            signer: ChecksumSigner(publicKey: key), seal: seal,
            sessionSigner: { ChecksumSessionSigner(publicKey: key, stationKey: $0) })
        return NodeDriver(machine: machine, outbox: outbox, ports: ports)
    }

    static func arrival(_ tag: UInt8, at ns: Int64, group: AddressFamily? = nil, bytes: [UInt8]? = nil) -> Arrival {
        Arrival(bytes: bytes ?? [tag], from: peer, at: LocalTime(ns: ns), group: group)
    }

    // MARK: Time only goes forward

    @Test func theMachineSeesTimeOnlyGoForward() {
        let ports = RecordingPorts()
        let driver = Self.driver(ports: ports)
        ports.clock = LocalTime(ns: 5_000)
        driver.step()
        // The clock steps back (an NTP correction of a non-monotonic source, or a datagram stamped
        // before the last input): the machine gets the last instant again, never an earlier one.
        ports.clock = LocalTime(ns: 3_000)
        driver.step(inputs: [.quit], arrivals: [Self.arrival(1, at: 4_000), Self.arrival(2, at: 6_000)])
        let instants = driver.machine.handled.map(\.at.ns)
        #expect(instants == [5_000, 5_000, 5_000, 6_000])
        #expect(driver.machine.handled.map(\.input) == ["start", "quit", "datagram 1", "datagram 2"])
    }

    @Test func startComesOnceAndFirst() {
        let driver = Self.driver()
        driver.start()
        driver.step(inputs: [.quit])
        driver.step()
        #expect(driver.machine.handled.map(\.input) == ["start", "quit"])
    }

    // MARK: Datagrams: in arrival order, in batches, one save first

    @Test func datagramsGoInTheOrderTheyArrivedInBatchesOf64() {
        let driver = Self.driver()
        driver.start()
        // Each delivery (one input, or one batch) is followed once: the inputs it handed over.
        var sizes: [Int] = []
        driver.afterStep = { machine, _, _ in sizes.append(machine.handled.count - sizes.reduce(1, +)) }
        // 130 datagrams handed over out of order; equal instants keep the order they were given in.
        var arrivals = (0..<130).map { Self.arrival(UInt8($0), at: 2_000_000_000 + Int64($0) * 10) }
        arrivals.swapAt(0, 129)
        arrivals.append(Self.arrival(200, at: 2_000_000_000 + 1_290))
        driver.step(arrivals: arrivals)
        let datagrams = driver.machine.handled.filter { $0.input.hasPrefix("datagram") }
        #expect(datagrams.map(\.input) == (0..<130).map { "datagram \($0)" } + ["datagram 200"])
        #expect(sizes == [64, 64, 3])
        #expect(NodeDriver<ScriptedMachine>.datagramBatch == 64)
    }

    @Test func aBatchSavesOnceBeforeItsOtherEffects() {
        var machine = ScriptedMachine()
        machine.answer = { input in
            guard case .datagram(let bytes, _, _) = input else { return [] }
            return [.log(.node, "heard \(bytes[0])"), .save(Self.saved)]
        }
        let ports = RecordingPorts()
        let driver = Self.driver(machine, ports: ports)
        driver.start()
        ports.calls = []
        driver.step(arrivals: (0..<3).map { Self.arrival(UInt8($0), at: 2_000_000_000 + Int64($0)) })
        // Nothing the batch acknowledges may go out before the batch is stored.
        #expect(ports.calls == ["save", "log", "log", "log"])
    }

    // MARK: Dual-stack twins

    @Test func aGroupDatagramHeardInBothFamiliesReachesTheMachineOnce() {
        var machine = ScriptedMachine()
        machine.answer = { input in if case .start = input { [.joinGroup(Self.group)] } else { [] } }
        let ports = RecordingPorts()
        ports.families = [.ipv4, .ipv6]
        let driver = Self.driver(machine, ports: ports)
        driver.start()
        driver.step(arrivals: [
            Self.arrival(1, at: 2_000_000_000, group: .ipv4),
            Self.arrival(1, at: 2_000_100_000, group: .ipv6),
            // The same bytes to the node's own address are not a group twin.
            Self.arrival(1, at: 2_000_200_000),
        ])
        #expect(driver.machine.handled.map(\.input) == ["start", "datagram 1", "datagram 1"])
    }

    @Test func withOneFamilyEveryCopyReachesTheMachine() {
        var machine = ScriptedMachine()
        machine.answer = { input in if case .start = input { [.joinGroup(Self.group)] } else { [] } }
        let driver = Self.driver(machine)
        driver.start()
        driver.step(arrivals: [
            Self.arrival(1, at: 2_000_000_000, group: .ipv4), Self.arrival(1, at: 2_000_100_000, group: .ipv4),
        ])
        // A repeat within one family is the machine's to judge (a replay), not the driver's to drop.
        #expect(driver.machine.handled.map(\.input) == ["start", "datagram 1", "datagram 1"])
    }

    // MARK: Failures outside the machine

    @Test func aGroupThatCannotBeJoinedStopsTheNode() {
        var machine = ScriptedMachine()
        machine.answer = { input in if case .start = input { [.joinGroup(Self.group)] } else { [] } }
        let ports = RecordingPorts()
        ports.joinFails = true
        let driver = Self.driver(machine, ports: ports)
        #expect(!driver.isDone)
        driver.start()
        #expect(driver.isDone)
        #expect(driver.fatal?.code == .network)
        driver.fail(NodeError(.player, "later"))
        #expect(driver.fatal?.code == .network)  // the first failure is the one reported
    }

    @Test func aFinishedMachineIsHandedNothingMore() {
        var machine = ScriptedMachine()
        machine.finishOn = "quit"
        let driver = Self.driver(machine)
        driver.step(inputs: [.quit])
        driver.step(inputs: [.quit], arrivals: [Self.arrival(1, at: 9_000_000_000)])
        #expect(driver.machine.handled.map(\.input) == ["start", "quit"])
        #expect(driver.isDone)
    }

    // MARK: The timer

    @Test func theTimerComesAfterTheTurnsInputsOnlyWhenDue() {
        var machine = ScriptedMachine()
        machine.wakeup = LocalTime(ns: 3_000_000_000)
        let ports = RecordingPorts()
        let driver = Self.driver(machine, ports: ports)
        ports.clock = LocalTime(ns: 2_999_999_999)
        driver.step(arrivals: [Self.arrival(1, at: 2_999_999_000)])
        #expect(!driver.machine.handled.map(\.input).contains("timer"))
        ports.clock = LocalTime(ns: 3_000_000_000)
        driver.step(arrivals: [Self.arrival(2, at: 3_000_000_000)])
        #expect(driver.machine.handled.map(\.input) == ["start", "datagram 1", "datagram 2", "timer"])
    }

    @Test func everyDeliveryIsFollowedOnce() {
        var machine = ScriptedMachine()
        machine.answer = { _ in [.log(.node, "x")] }
        let driver = Self.driver(machine)
        var followed: [Int] = []
        driver.afterStep = { _, effects, _ in followed.append(effects.count) }
        driver.step(inputs: [.quit], arrivals: (0..<70).map { Self.arrival(UInt8($0), at: Int64($0)) })
        // start, quit, a batch of 64 and one of 6: four turns of the machine, four calls.
        #expect(followed == [1, 1, 64, 6])
    }

    // MARK: Sending through the outbox

    /// A driver whose machine sends `messages` to the station on its start.
    static func sending(
        _ messages: [Message], ports: RecordingPorts, seal: (any StationSeal)? = nil, first: [Effect] = []
    )
        -> NodeDriver<ScriptedMachine>
    {
        var machine = ScriptedMachine()
        machine.answer = { input in
            guard case .start = input else { return [] }
            return first + messages.map { .send($0, to: .peer(Self.peer), station: Self.station) }
        }
        let driver = Self.driver(machine, ports: ports, seal: seal)
        driver.start()
        return driver
    }

    @Test func sentDatagramsAreNumberedByTheRealTimeClockAndNeverRepeat() throws {
        let ports = RecordingPorts()
        ports.realTime = 1_700_000_000_000_000_123
        _ = Self.sending([.heartbeat(Heartbeat()), .heartbeat(Heartbeat()), .leave(Leave())], ports: ports)
        let sequences = try ports.sent.map { try Datagram.decode($0).header.sequence }
        // The clock stood still between them: each number is one more than the last.
        #expect(sequences == [1_700_000_000_000_000_123, 1_700_000_000_000_000_124, 1_700_000_000_000_000_125])
        let decoded = try Datagram.decode(ports.sent[0])
        #expect(decoded.header.sender == Self.key)
        #expect(decoded.header.stationID == Self.station)
        #expect(ChecksumVerifier().verify(decoded))
    }

    @Test func pingsAndPongsCarryTheClockAsTheyLeave() throws {
        let ports = RecordingPorts()
        ports.clock = LocalTime(ns: 42_000)
        _ = Self.sending(
            [
                .timePing(TimePing(clientSendNs: 0)),
                .timePong(TimePong(clientSendNs: 7, serverReceiveNs: 40_000, serverSendNs: 0)),
            ], ports: ports)
        guard case .timePing(let ping) = try Datagram.decode(ports.sent[0]).message,
            case .timePong(let pong) = try Datagram.decode(ports.sent[1]).message
        else { return #expect(Bool(false), "not a ping and a pong") }
        #expect(ping.clientSendNs == 42_000)
        #expect(pong.serverSendNs == 42_000)
        #expect(pong.clientSendNs == 7 && pong.serverReceiveNs == 40_000)
    }

    @Test func aPrivateStationsDatagramsAreSealedOnlyAfterSealFor() throws {
        let seal = ChecksumSeal(secret: 99)
        let ports = RecordingPorts()
        _ = Self.sending(
            [.heartbeat(Heartbeat())], ports: ports, seal: seal,
            first: [
                .send(.heartbeat(Heartbeat()), to: .peer(Self.peer), station: Self.station), .sealFor(Self.station),
            ])
        #expect(!SealedDatagram.isSealed(ports.sent[0]))
        #expect(SealedDatagram.isSealed(ports.sent[1]))
        let inner = try #require(seal.open(datagram: ports.sent[1]))
        #expect(try Datagram.decode(inner).header.stationID == Self.station)
    }

    @Test func withoutACodeNothingIsSealed() {
        let ports = RecordingPorts()
        _ = Self.sending([.heartbeat(Heartbeat())], ports: ports, first: [.sealFor(Self.station)])
        #expect(!SealedDatagram.isSealed(ports.sent[0]))
    }

    @Test func votesToAStationThatTakesMACsCarryOneOtherMessagesAreSigned() throws {
        let ports = RecordingPorts()
        let stationKey = PublicKey(bytes: [UInt8](repeating: 9, count: 32))!
        _ = Self.sending(
            [.vote(Vote(trackID: "t", choice: .up)), .heartbeat(Heartbeat())], ports: ports,
            first: [.sessionFor(Self.station, stationKey: stationKey)])
        let vote = try Datagram.decode(ports.sent[0])
        let heartbeat = try Datagram.decode(ports.sent[1])
        #expect(vote.header.authentication == .session)
        let owner = ChecksumVerifier(sessionOwner: stationKey)
        #expect(owner.verify(vote, sessionKey: try #require(owner.sessionKey(with: Self.key))))
        #expect(heartbeat.header.authentication == .signature)
        #expect(ChecksumVerifier().verify(heartbeat))
    }
}
