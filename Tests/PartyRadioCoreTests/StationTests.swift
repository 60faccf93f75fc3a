import Foundation
import Testing

@testable import PartyRadioCore

@Suite struct VoteBookTests {
    let alice = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
    let bob = PublicKey(bytes: [UInt8](repeating: 2, count: 32))!

    @Test func oneVotePerVoterChangeableAndClearable() {
        var book = VoteBook(trackID: "t1")
        #expect(ok(book.apply(voter: alice, trackID: "t1", choice: .up) == .counted))
        #expect(ok(book.apply(voter: alice, trackID: "t1", choice: .up) == .counted))
        #expect(book.tally == Tally(up: 1, down: 0))
        #expect(ok(book.apply(voter: bob, trackID: "t1", choice: .down) == .counted))
        #expect(ok(book.apply(voter: alice, trackID: "t1", choice: .down) == .counted))
        #expect(book.tally == Tally(up: 0, down: 2))
        #expect(ok(book.apply(voter: alice, trackID: "t1", choice: .clear) == .counted))
        #expect(book.tally == Tally(up: 0, down: 1))
        #expect(book.choice(of: alice) == .clear)
    }

    @Test func staleTracksChangeNothingAndResetForgets() {
        var book = VoteBook(trackID: "t1")
        _ = book.apply(voter: alice, trackID: "t1", choice: .up)
        #expect(ok(book.apply(voter: bob, trackID: "t0", choice: .down) == .staleTrack))
        #expect(book.tally == Tally(up: 1, down: 0))
        book.reset(trackID: "t2")
        #expect(book.tally == Tally())
        var empty = VoteBook()
        #expect(ok(empty.apply(voter: alice, trackID: "t1", choice: .up) == .noTrack))
    }

    /// The book as it was before it kept a row per voter (choices, keys by address, sequences):
    /// the rows must behave the same, vote for vote.
    struct Reference {
        var votes: [PublicKey: VoteChoice] = [:]
        var voters: [String: Set<PublicKey>] = [:]
        var sequences: [PublicKey: UInt64] = [:]

        mutating func apply(
            _ voter: PublicKey, _ choice: VoteChoice, _ address: String, _ limit: Int, _ sequence: UInt64?
        ) -> VoteAck.Status {
            if let sequence {
                if let last = sequences[voter], sequence <= last { return .superseded }  // old: nothing changes
                sequences[voter] = sequence
            }
            if choice == .clear {
                votes[voter] = nil
                for host in voters.keys { voters[host]?.remove(voter) }
                voters = voters.filter { !$0.value.isEmpty }
                return .counted
            }
            var here = voters[address] ?? []
            if votes[voter] == nil && !here.contains(voter) && here.count >= limit { return .addressLimit }
            here.insert(voter)
            voters[address] = here
            votes[voter] = choice
            return .counted
        }

        var rows: [PublicKey: VoteBook.Voter] {
            var rows: [PublicKey: VoteBook.Voter] = [:]
            let empty = VoteBook.Voter(choice: nil, addresses: [], sequence: nil)
            for (key, choice) in votes { rows[key, default: empty].choice = choice }
            for (address, keys) in voters {
                for key in keys { rows[key, default: empty].addresses.append(address) }
            }
            for (key, sequence) in sequences { rows[key, default: empty].sequence = sequence }
            for key in rows.keys { rows[key]?.addresses.sort() }
            return rows
        }
    }

    @Test(arguments: 0..<20) func theRowsBehaveAsTheBookDidVoteForVote(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let keys = (0..<12).map { PublicKey(bytes: [UInt8](repeating: UInt8($0 + 1), count: 32))! }
        let addresses = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "fd00::1"]
        let limit = Int(random.next() % 3) + 1
        var book = VoteBook(trackID: "t")
        var reference = Reference()
        for step in 0..<400 {
            let key = keys[Int(random.next() % 12)]
            let choice = [VoteChoice.up, .down, .clear][Int(random.next() % 3)]
            let address = addresses[Int(random.next() % 4)]
            let sequence: UInt64? = random.next() % 5 == 0 ? nil : random.next() % 300
            let status = book.apply(
                voter: key, trackID: "t", choice: choice, from: address, votersPerAddress: limit, sequence: sequence)
            #expect(status == reference.apply(key, choice, address, limit, sequence), "step \(step)")
            #expect(book.voterRows == reference.rows, "step \(step)")
        }
        let choices = reference.votes.values
        #expect(
            book.tally == Tally(up: UInt32(choices.count { $0 == .up }), down: UInt32(choices.count { $0 == .down })))
        // Made again from its rows, and through its JSON (an older file's "votes" book): the same book.
        let rebuilt = VoteBook(trackID: "t", voterRows: book.voterRows)
        #expect(rebuilt == book && rebuilt.tally == book.tally)
        let decoded = try JSONDecoder().decode(VoteBook.self, from: JSONEncoder().encode(book))
        #expect(decoded == book && decoded.tally == book.tally)
        var continued = (book, decoded)
        for key in keys {
            let a = continued.0.apply(voter: key, trackID: "t", choice: .up, from: "10.0.0.9", votersPerAddress: 1)
            let b = continued.1.apply(voter: key, trackID: "t", choice: .up, from: "10.0.0.9", votersPerAddress: 1)
            #expect(a == b)
        }
        #expect(continued.0 == continued.1)
    }
}

@Suite struct RosterAndReplayTests {
    let key = PublicKey(bytes: [UInt8](repeating: 5, count: 32))!

    @Test func listenersJoinBeatLeaveAndExpire() {
        var roster = ListenerRoster(timeoutNs: 3_000)
        #expect(ok(roster.join(key, name: "a", now: 0)))
        #expect(!ok(roster.heartbeat(key, now: 2_000)))
        #expect(ok(roster.expire(now: 4_000) == 0))
        #expect(ok(roster.expire(now: 5_001) == 1))
        #expect(ok(roster.heartbeat(key, now: 6_000)))  // an unknown listener's heartbeat is a join
        #expect(ok(roster.leave(key)))
        #expect(!ok(roster.leave(key)))
        #expect(roster.count == 0)
    }

    @Test func replayWindowAcceptsEachSequenceOnceEvenReordered() {
        var window = ReplayWindow()
        #expect(ok(window.accept(100, from: key)))
        #expect(!ok(window.accept(100, from: key)))
        #expect(ok(window.accept(102, from: key)))
        #expect(ok(window.accept(101, from: key)))
        #expect(!ok(window.accept(101, from: key)))
        #expect(ok(window.accept(300, from: key)))
        #expect(ok(window.accept(200, from: key)))  // reordered: within the span, not seen
        #expect(ok(window.accept(299, from: key)))
        window.forget(key)
        #expect(ok(window.accept(5, from: key)))
    }

    @Test func replayWindowSpansSecondsOfNanosecondNumbersAndStaysBounded() {
        var window = ReplayWindow()
        let base: UInt64 = 1_764_000_000_000_000_000
        // Two processes with one key: numbers microseconds apart, arriving out of order.
        for n in stride(from: 0, to: 40, by: 2) {
            #expect(ok(window.accept(base + UInt64(n + 1) * 1_000, from: key)))
            #expect(ok(window.accept(base + UInt64(n) * 1_000, from: key)))
        }
        for n in 0..<40 { #expect(!ok(window.accept(base + UInt64(n) * 1_000, from: key))) }
        // Older than the span: a replay of something long gone.
        #expect(ok(window.accept(base + ReplayWindow.spanNs + 100_000, from: key)))
        #expect(!ok(window.accept(base + 99_000, from: key)))
        // Many numbers: the oldest beyond what is remembered are refused, never accepted twice.
        var accepted = Set<UInt64>()
        for n in 0..<500 where window.accept(base + ReplayWindow.spanNs + 200_000 + UInt64(n), from: key) {
            accepted.insert(UInt64(n))
        }
        #expect(accepted.count == 500)
        for n in 0..<500 { #expect(!ok(window.accept(base + ReplayWindow.spanNs + 200_000 + UInt64(n), from: key))) }
    }

    /// `oneKeyManyProcesses` under load: the DJ stalled 1.2 s, then drained its IPv4 socket (71 of
    /// the shared key's datagrams) before its IPv6 one (a ping taken 40 ms in): no replay.
    @Test func replayWindowTakesANumberThatCameAfterManyNewerOnesWithinTheSpan() {
        var window = ReplayWindow()
        let start: UInt64 = 1_764_000_000_000_000_000
        let ms: UInt64 = 1_000_000
        let ipv4 = stride(from: 0, to: 1_200, by: 17).map { start + UInt64($0) * ms }
        let ipv6 = start + 40 * ms
        for n in ipv4 { #expect(ok(window.accept(n, from: key))) }
        #expect(ok(window.accept(ipv6, from: key)), "1.16 s behind the newest, inside the 5 s span")
        #expect(!ok(window.accept(ipv6, from: key)))
        for n in ipv4 { #expect(!ok(window.accept(n, from: key))) }
    }

    @Test func replayWindowMemoryStaysBoundedUnderAFloodWithinTheSpan() {
        var window = ReplayWindow()
        let start: UInt64 = 1_764_000_000_000_000_000
        for n in 0..<5_000 { #expect(ok(window.accept(start + UInt64(n) * 1_000, from: key))) }
        #expect(window.rememberedCount(of: key) == ReplayWindow.remembered)
        for n in 0..<5_000 { #expect(!ok(window.accept(start + UInt64(n) * 1_000, from: key))) }
    }

    @Test func replayWindowForgetsTheLeastRecentSenderWhenFull() {
        var window = ReplayWindow(capacity: 2)
        let keys = (1...3).map { PublicKey(bytes: [UInt8](repeating: $0, count: 32))! }
        #expect(ok(window.accept(10, from: keys[0])))
        #expect(ok(window.accept(10, from: keys[1])))
        #expect(ok(window.accept(10, from: keys[2])))  // evicts keys[0]
        #expect(ok(window.accept(10, from: keys[0])))
        #expect(!ok(window.accept(10, from: keys[2])))
    }
}

@Suite struct StationEngineTests {
    let listener = PublicKey(bytes: [UInt8](repeating: 8, count: 32))!
    var queue: [Track] {
        (1...3).map {
            Track(id: "t\($0)", title: "T\($0)", artist: "A", album: "", durationMs: 10_000, source: "s\($0)")
        }
    }

    @Test func skipPauseResumeAndWrap() {
        var engine = StationEngine(name: "S", queue: queue, now: 0)
        #expect(engine.positionNs(at: Nanos.seconds(4)) == Nanos.seconds(4))
        #expect(ok(engine.pause(now: Nanos.seconds(4))))
        #expect(!ok(engine.pause(now: Nanos.seconds(5))))
        #expect(engine.positionNs(at: Nanos.seconds(9)) == Nanos.seconds(4))
        #expect(ok(engine.resume(now: Nanos.seconds(9))))
        #expect(engine.positionNs(at: Nanos.seconds(10)) == Nanos.seconds(5))
        #expect(ok(engine.next(now: Nanos.seconds(10)) && engine.nowPlaying?.id == "t2"))
        #expect(engine.positionNs(at: Nanos.seconds(10)) == 0)
        _ = engine.next(now: Nanos.seconds(11))
        _ = engine.next(now: Nanos.seconds(12))
        #expect(engine.nowPlaying?.id == "t1")  // wrapped
        _ = engine.previous(now: Nanos.seconds(12))
        #expect(engine.nowPlaying?.id == "t1")  // restarts the first
    }

    @Test func finishedTracksAdvanceWithoutLosingTime() {
        var engine = StationEngine(name: "S", queue: queue, now: 0)
        #expect(!ok(engine.tick(now: Nanos.seconds(9))))
        #expect(ok(engine.tick(now: Nanos.seconds(10.5))))
        #expect(engine.nowPlaying?.id == "t2")
        #expect(engine.positionNs(at: Nanos.seconds(10.5)) == Nanos.seconds(0.5))
    }

    @Test func votesResetOnTrackChangeAndAcksCarryTheTally() {
        var engine = StationEngine(name: "S", queue: queue, now: 0)
        _ = engine.hello(from: listener, name: "l", now: 0)
        let ack = engine.vote(from: listener, trackID: "t1", choice: .up, sequence: 9)
        #expect(ack.status == .counted && ack.tally == Tally(up: 1) && ack.listenerCount == 1 && ack.voteSequence == 9)
        #expect(engine.snapshot(now: 0).tally == Tally(up: 1))
        _ = engine.next(now: 1)
        #expect(engine.snapshot(now: 1).tally == Tally())
        #expect(ok(engine.vote(from: listener, trackID: "t1", choice: .down, sequence: 10).status == .staleTrack))
    }

    @Test func anEmptyQueueIsQuiet() {
        var engine = StationEngine(name: "S", queue: [], now: 0)
        #expect(ok(!engine.next(now: 1) && !engine.pause(now: 1) && !engine.tick(now: 100)))
        #expect(engine.snapshot(now: 1).nowPlaying == nil)
        #expect(ok(engine.enqueue(queue, now: 2) && engine.nowPlaying?.id == "t1"))
    }
}

/// Repeat and shuffle (the DJ's queue controls).
@Suite struct QueueControlTests {
    let tracks = (0..<4).map { n in
        Track(id: "t\(n)", title: "T\(n)", artist: "A", album: "", durationMs: 10_000, source: "s\(n)")
    }

    @Test func repeatOneStartsTheSameTrackAgainWithAFreshTally() {
        var engine = StationEngine(name: "R", queue: tracks, now: 0)
        engine.repeatMode = .one
        _ = engine.vote(
            from: PublicKey(bytes: [UInt8](repeating: 1, count: 32))!, trackID: "t0", choice: .up, sequence: 1)
        #expect(ok(engine.tick(now: Nanos.seconds(10.5))))
        #expect(engine.index == 0 && engine.votes.tally == Tally())
        #expect(engine.positionNs(at: Nanos.seconds(10.5)) == Nanos.seconds(0.5))
    }

    @Test func repeatOffStopsAtTheEndOfTheLastTrack() {
        var engine = StationEngine(name: "R", queue: tracks, now: 0, startIndex: 3)
        engine.repeatMode = .off
        #expect(ok(engine.tick(now: Nanos.seconds(12))))
        #expect(engine.index == 3 && engine.isPaused && engine.positionNs(at: Nanos.seconds(20)) == Nanos.seconds(10))
        #expect(!ok(engine.tick(now: Nanos.seconds(30))))
        engine.repeatMode = .all
        var other = StationEngine(name: "R", queue: tracks, now: 0, startIndex: 3)
        other.repeatMode = .all
        #expect(ok(other.tick(now: Nanos.seconds(12))) && other.index == 0)
    }

    @Test func shuffleKeepsThePlayingTrackAndEveryTrack() {
        var engine = StationEngine(
            name: "S",
            queue: tracks
                + tracks.map {
                    var t = $0
                    t.id += "b"
                    return t
                }, now: 0)
        let before = engine.queue
        var random = SplitMix64(seed: 42)
        #expect(ok(engine.shuffleUpcoming(using: &random)))
        #expect(engine.queue[0] == before[0] && Set(engine.queue.map(\.id)) == Set(before.map(\.id)))
        #expect(engine.queue != before)
        var last = StationEngine(name: "S", queue: tracks, now: 0, startIndex: 3)
        #expect(!ok(last.shuffleUpcoming(using: &random)))  // nothing after the last track
    }
}
