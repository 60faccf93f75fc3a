import Testing

@testable import PartyRadioCore

/// The DJ's HTTP server under one machine with many addresses: whoever fills it makes room for
/// everybody else.
@Suite struct ConnectionTableTests {
    let start = LocalTime(ns: 1_000_000_000_000)
    let second: Int64 = 1_000_000_000

    /// The attacker's machine: 64 aliases, one link-layer address.
    static let attacker = "mac:02:00:00:00:00:66"
    static func alias(_ n: Int) -> String { "10.99.0.\(100 + n % 64)" }

    func admitted(_ decision: ConnectionTable.Decision) -> (ConnectionTable.ID, [ConnectionTable.ID])? {
        if case .admit(let id, let closing) = decision { return (id, closing) }
        return nil
    }

    /// Fills the table with the attacker's connections, 8 per alias; returns their IDs.
    func filled(_ table: inout ConnectionTable, phase: ConnectionTable.Phase = .awaitingRequest) -> [ConnectionTable.ID]
    {
        var ids: [ConnectionTable.ID] = []
        for n in 0..<table.limits.total {
            let now = start + Int64(n) * 1_000_000
            guard let (id, _) = admitted(table.open(address: Self.alias(n), machine: Self.attacker, now: now)) else {
                Issue.record("the attacker's connection \(n) was refused before the table was full")
                return ids
            }
            switch phase {
            case .awaitingRequest: break
            case .serving: table.requestStarted(id, now: now)
            case .streaming:
                table.requestStarted(id, now: now)
                _ = table.streamStarting(id, now: now)
            }
            ids.append(id)
        }
        return ids
    }

    @Test func oneAddressHoldsAtMostItsShare() {
        var table = ConnectionTable()
        var ids: [ConnectionTable.ID] = []
        for _ in 0..<8 {
            let decision = table.open(address: "10.99.0.5", machine: "mac:a", now: start)
            ids.append(admitted(decision)!.0)
        }
        #expect(table.open(address: "10.99.0.5", machine: "mac:a", now: start) == .refuse(.address))
        // Another address of the same machine is another address.
        #expect(admitted(table.open(address: "10.99.0.6", machine: "mac:a", now: start)) != nil)
        table.closed(ids[0])
        #expect(admitted(table.open(address: "10.99.0.5", machine: "mac:a", now: start)) != nil)
    }

    @Test func belowTheTotalEveryoneIsTakenAndNothingCloses() {
        var table = ConnectionTable(limits: .init(total: 64))
        for n in 0..<64 {
            let decision = table.open(address: "10.0.\(n / 8).\(n % 8)", machine: "mac:\(n % 3)", now: start)
            #expect(admitted(decision)?.1 == [])
        }
        #expect(table.count == 64)
    }

    @Test func aGuestTakesASlotFromTheMachineThatFilledTheServer() {
        var table = ConnectionTable()
        let attackers = filled(&table)
        // The oldest of the attacker's connections waiting for its headers makes room.
        let guest = admitted(table.open(address: "10.99.0.3", machine: "mac:guest", now: start + second))
        #expect(guest?.1 == [attackers[0]])
        #expect(table.count == table.limits.total)
        // The attacker's next connection is refused: its machine holds the most.
        #expect(table.open(address: Self.alias(0), machine: Self.attacker, now: start + second) == .refuse(.fullest))
        // Five more guests, each from its own machine, all get in.
        for n in 0..<5 {
            let decision = table.open(address: "10.99.0.\(10 + n)", machine: "mac:g\(n)", now: start + second)
            #expect(admitted(decision)?.1.count == 1)
        }
        #expect(table.entries.values.filter { $0.machine == Self.attacker }.count == table.limits.total - 6)
    }

    @Test func withoutLinkLayerAddressesTheFullestAddressGivesWay() {
        // Each alias is a machine of its own (the neighbour table did not know them): the guest,
        // holding fewer than an alias, still gets in.
        var table = ConnectionTable()
        for n in 0..<table.limits.total {
            _ = table.open(address: Self.alias(n), machine: Self.alias(n), now: start)
        }
        for n in 0..<8 {
            #expect(admitted(table.open(address: "10.99.0.3", machine: "10.99.0.3", now: start))?.1.count == 1, "\(n)")
        }
        // Its address's share is 8, as every alias's.
        #expect(table.open(address: "10.99.0.3", machine: "10.99.0.3", now: start) == .refuse(.address))
    }

    @Test func theVictimIsWaitingForHeadersFirstThenStreamingThenServing() {
        var table = ConnectionTable(limits: .init(total: 8))
        let ids = (0..<8).map { n in
            admitted(table.open(address: "10.0.0.\(n)", machine: "mac:x", now: start + Int64(n)))!.0
        }
        // 0–2 serve, 3–5 stream, 6 and 7 wait for headers (7 the longest, since its last answer).
        for id in ids[0...5] { table.requestStarted(id, now: start + second) }
        for id in ids[3...5] { _ = table.streamStarting(id, now: start + second) }
        table.requestStarted(ids[6], now: start)
        table.requestEnded(ids[6], now: start + 2 * second)
        table.requestStarted(ids[7], now: start)
        table.requestEnded(ids[7], now: start + second)
        var order: [ConnectionTable.ID] = []
        for n in 0..<8 {
            let decision = table.open(address: "10.1.0.\(n)", machine: "mac:y\(n)", now: start + 3 * second)
            order += admitted(decision)?.1 ?? []
        }
        #expect(order == [ids[7], ids[6], ids[3], ids[4], ids[5], ids[0], ids[1], ids[2]])
    }

    @Test func headersHaveADeadline() {
        var table = ConnectionTable()
        let slow = admitted(table.open(address: "10.99.0.7", machine: "mac:s", now: start))!.0
        let served = admitted(table.open(address: "10.99.0.7", machine: "mac:s", now: start))!.0
        table.requestStarted(served, now: start)
        let deadline = table.limits.headerDeadlineNs
        #expect(admitted(table.open(address: "10.99.0.8", machine: "mac:t", now: start + deadline))?.1 == [])
        // Past the deadline, the next decision closes the slow one, not the one being answered.
        #expect(admitted(table.open(address: "10.99.0.8", machine: "mac:t", now: start + deadline + 1))?.1 == [slow])
        // After its answer the served one has the deadline again, from then.
        table.requestEnded(served, now: start + deadline)
        let later = start + 2 * deadline + 1
        #expect(admitted(table.open(address: "10.99.0.9", machine: "mac:u", now: later))?.1.contains(served) == true)
    }

    @Test func eventStreamsHaveACapOfTheirOwnSharedTheSameWay() {
        var table = ConnectionTable(limits: .init(total: 64, streams: 16))
        var attackers: [ConnectionTable.ID] = []
        for n in 0..<32 {
            let id = admitted(table.open(address: Self.alias(n), machine: Self.attacker, now: start))!.0
            table.requestStarted(id, now: start)
            if case .admit = table.streamStarting(id, now: start + Int64(n)) { attackers.append(id) }
        }
        #expect(attackers.count == 16 && table.streamCount == 16)
        let guest = admitted(table.open(address: "10.99.0.3", machine: "mac:guest", now: start))!.0
        table.requestStarted(guest, now: start)
        #expect(table.streamStarting(guest, now: start + second) == .admit(guest, closing: [attackers[0]]))
        #expect(table.streamCount == 16)
        // A stream that ends gives its place back.
        table.requestEnded(guest, now: start + 2 * second)
        #expect(table.streamCount == 15)
        let another = admitted(table.open(address: Self.alias(40), machine: Self.attacker, now: start))!.0
        table.requestStarted(another, now: start)
        #expect(table.streamStarting(another, now: start) == .admit(another, closing: []))
        let more = admitted(table.open(address: Self.alias(41), machine: Self.attacker, now: start))!.0
        table.requestStarted(more, now: start)
        #expect(table.streamStarting(more, now: start) == .refuse(.fullest))
    }

    @Test func closingTwiceOrClosingWhatWasEvictedChangesNothing() throws {
        var table = ConnectionTable(limits: .init(total: 8))
        var ids: [ConnectionTable.ID] = []
        for n in 0..<8 {
            ids.append(try #require(admitted(table.open(address: "10.0.0.\(n)", machine: "m", now: start))).0)
        }
        let (_, closing) = try #require(admitted(table.open(address: "10.0.1.1", machine: "other", now: start)))
        #expect(closing.count == 1)
        table.closed(try #require(closing.first))
        table.closed(ids[1])
        table.closed(ids[1])
        #expect(table.count == 7)
        #expect(table.entries.values.filter { $0.machine == "m" }.count == 6)
    }

    /// The attack of the issue, in the table: one machine with 64 aliases keeps 600 connections
    /// coming (slow requests and streams), while guests on five machines come and go. Rule: a
    /// guest holding fewer connections than the attacker's machine is never refused, and the
    /// server never holds more than its total.
    @Test(arguments: [ConnectionTable.Phase.awaitingRequest, .streaming])
    func guestsAlwaysGetInUnderTheAttack(attackerPhase: ConnectionTable.Phase) {
        var table = ConnectionTable()
        var random = SplitMix64(seed: 27)
        var guestConnections: [String: [ConnectionTable.ID]] = [:]
        var now = start
        for step in 0..<6_000 {
            now += 5_000_000
            if random.next() % 4 != 0 {
                let decision = table.open(address: Self.alias(step), machine: Self.attacker, now: now)
                if let (id, _) = admitted(decision), attackerPhase == .streaming {
                    table.requestStarted(id, now: now)
                    _ = table.streamStarting(id, now: now)
                }
            } else {
                let index = random.next() % 5
                let guest = "mac:g\(index)"
                var held = guestConnections[guest, default: []].filter { table.entries[$0] != nil }
                if held.count >= 4 {  // the guest leaves: the attacker takes the slots back at once
                    for id in held { table.closed(id) }
                    held = []
                }
                // It holds at most 4 (under its address's 8), the attacker's machine the most.
                let decision = table.open(address: "10.99.1.\(index)", machine: guest, now: now)
                #expect(admitted(decision) != nil, "a guest was refused at step \(step)")
                if let (id, _) = admitted(decision) {
                    table.requestStarted(id, now: now)
                    held.append(id)
                }
                guestConnections[guest] = held
            }
            #expect(table.count <= table.limits.total)
            #expect(table.streamCount <= table.limits.streams)
        }
    }
}
