import Testing

@testable import PartyRadioCore

/// Guest names and the listener list on the wire.
@Suite struct RosterTests {
    @Test func guestNamesAreOneToThirtyTwoPlainCharacters() throws {
        #expect(try GuestName(validating: "  Alice  ").value == "Alice")
        #expect(throws: GuestName.Problem.empty) { try GuestName(validating: " \t ") }
        #expect(throws: GuestName.Problem.tooLong(33)) { try GuestName(validating: String(repeating: "é", count: 33)) }
        #expect(throws: GuestName.Problem.controlCharacters) { try GuestName(validating: "a\u{1B}[2Jb") }
        // 32 characters, and at most 64 bytes of UTF-8 (what the wire carries).
        #expect(try GuestName(validating: String(repeating: "é", count: 32)).value.count == 32)
        #expect(try GuestName(validating: String(repeating: "🎸", count: 16)).value.count == 16)
        #expect(throws: GuestName.Problem.tooManyBytes(68, limit: 64)) {
            try GuestName(validating: String(repeating: "🎸", count: 17))
        }
        // From the network: cut to fit, whole characters.
        #expect(GuestName.fromNetwork(String(repeating: "🎸", count: 40))?.value == String(repeating: "🎸", count: 16))
    }

    @Test func theDefaultIsUserAtHostAndAlwaysValid() {
        #expect(GuestName.defaultName(user: "alice", host: "kitchen-pi").value == "alice@kitchen-pi")
        #expect(GuestName.defaultName(user: "", host: "kitchen-pi").value == "kitchen-pi")
        #expect(GuestName.defaultName(user: "", host: "").value == "guest")
        #expect(GuestName.defaultName(user: String(repeating: "u", count: 40), host: "h").value.count == 32)
        #expect(GuestName.defaultName(user: "a\u{7}b", host: "").value == "ab")
    }

    @Test func namesFromTheNetworkAreCleanedAndCut() {
        #expect(GuestName.fromNetwork("\u{1B}]0;pwned\u{7}Bob\u{1B}[31m")?.value == "Bob")  // the whole sequences
        #expect(GuestName.fromNetwork(String(repeating: "x", count: 100))?.value.count == 32)
        #expect(GuestName.fromNetwork("\u{1B}\u{7}\n") == nil)
    }

    @Test func theLongestListFitsADatagramAndCutsLongNames() throws {
        let long = String(repeating: "🎸", count: 32)  // 128 bytes of UTF-8
        let roster = Roster(
            total: 500, entries: (0..<100).map { Roster.Entry(name: long, listeningForMs: UInt32($0)) })
        #expect(roster.entries.count == Roster.Limit.maxEntries)
        let bytes = try Datagram.encode(
            .roster(roster), stationID: StationID(rawValue: 1), sequence: 1, signer: FakeSigner(3))
        #expect(bytes.count <= Datagram.maxSize)
        guard case .roster(let decoded) = try Datagram.decode(bytes).message else {
            Issue.record("not a roster")
            return
        }
        #expect(decoded.total == 500 && decoded.entries.count == Roster.Limit.maxEntries)
        #expect(decoded.entries.allSatisfy { $0.name.utf8.count <= Roster.Limit.name && long.hasPrefix($0.name) })
    }

    @Test func theDJListsNamesLongestListeningFirst() {
        var roster = ListenerRoster()
        let a = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let b = PublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        roster.join(b, name: "Bob", now: DJTime(ns: 2_000_000_000))
        roster.join(a, name: "Alice", now: DJTime(ns: 1_000_000_000))
        roster.join(a, name: "Alice 2", now: DJTime(ns: 3_000_000_000))  // a new hello keeps the join time
        let list = roster.list(now: DJTime(ns: 5_000_000_000))
        #expect(list.total == 2)
        #expect(
            list.entries == [
                Roster.Entry(name: "Alice 2", listeningForMs: 4_000), Roster.Entry(name: "Bob", listeningForMs: 3_000),
            ])
    }

    /// The one-pass pick is the first entries of a full sort, ties (same join time) by name, for
    /// rosters smaller and larger than a datagram's list.
    @Test func theListIsTheFirstOfAFullSort() {
        var random = SplitMix64(seed: 11)
        for size in [0, 1, 14, 15, 16, 40, 500] {
            var roster = ListenerRoster()
            for index in 0..<size {
                let key = PublicKey(bytes: (0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) })!
                let joined = DJTime(ns: Int64(random.next() % 20) * 1_000_000_000)
                roster.join(key, name: "guest \(random.next() % 7) \(index)", now: joined)
            }
            let now = DJTime(ns: 30_000_000_000)
            let expected = roster.entries.values.sorted { ($0.joined, $0.name) < ($1.joined, $1.name) }
                .prefix(Roster.Limit.maxEntries)
                .map { Roster.Entry(name: $0.name, listeningForMs: UInt32((now - $0.joined) / 1_000_000)) }
            let list = roster.list(now: now)
            #expect(list.total == UInt32(size) && list.entries == Array(expected), "size \(size)")
        }
    }

    /// Crowd skip's room counts machines, not keys: whatever the listeners do (join under a machine
    /// or none yet, learn or change it by heartbeat, leave, fall silent), the room is the machines
    /// listening, each up to `votersPerMachine` listeners, restated here from the entries themselves.
    @Test func theRoomCountsMachinesWhateverTheListenersDo() {
        var random = SplitMix64(seed: 27)
        let keys = (0..<40).map { PublicKey(bytes: [0x7E, UInt8($0)] + [UInt8](repeating: 9, count: 30))! }
        let machines: [String?] = [nil, "link:02:00:00:00:00:01", "link:02:00:00:00:00:02", "10.0.0.9", "10.0.0.10"]
        var roster = ListenerRoster(timeoutNs: 3_500)
        for step in 0..<3_000 {
            let now = DJTime(ns: Int64(step) * 100)
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let machine = machines[Int(random.next() % UInt64(machines.count))]
            switch random.next() % 10 {
            case 0..<4: roster.join(key, name: "n", machine: machine, now: now)
            case 4..<8: roster.heartbeat(key, machine: machine, now: now)
            case 8: roster.leave(key)
            default: _ = roster.expire(now: now)
            }
            for voters in [1, 2, 3] {
                var perMachine: [String: Int] = [:]
                for entry in roster.entries.values { if let m = entry.machine { perMachine[m, default: 0] += 1 } }
                let expected = perMachine.values.reduce(0) { $0 + min($1, voters) }
                #expect(roster.room(votersPerMachine: voters) == expected, "step \(step), \(voters) per machine")
            }
        }
    }

    @Test func twentyTwoKeysOnOneMachineAreOneInTheRoomAndAllListed() {
        var roster = ListenerRoster()
        for n in 0..<22 {
            let key = PublicKey(bytes: [0x7F, UInt8(n)] + [UInt8](repeating: 9, count: 30))!
            roster.join(key, name: "fresh \(n)", machine: "link:02:00:00:00:00:66", now: DJTime(ns: 0))
        }
        let friend = PublicKey(bytes: [UInt8](repeating: 4, count: 32))!
        roster.join(friend, name: "Ann", machine: "link:02:00:00:00:00:01", now: DJTime(ns: 0))
        let stranger = PublicKey(bytes: [UInt8](repeating: 5, count: 32))!
        roster.join(stranger, name: "Bo", machine: nil, now: DJTime(ns: 0))  // its machine not known yet
        #expect(roster.count == 24 && roster.list(now: DJTime(ns: 0)).total == 24)
        #expect(roster.room(votersPerMachine: 1) == 2)
        #expect(roster.room(votersPerMachine: 64) == 23)
        roster.heartbeat(stranger, machine: "link:02:00:00:00:00:02", now: DJTime(ns: 1))
        #expect(roster.room(votersPerMachine: 1) == 3)
    }
}
