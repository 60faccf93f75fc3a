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
}
