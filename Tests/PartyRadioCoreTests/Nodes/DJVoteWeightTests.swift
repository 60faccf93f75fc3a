import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Votes weigh after listening (docs/SECURITY.md): a vote is counted and shown at once, but weighs
/// toward crowd skip only once its machine has been present — a listener's hellos and heartbeats,
/// a page that plays, a page open on the station — for `--vote-weight-after` (20 s by default)
/// without a silence over 3.5 s. The rule restated: crowd skip on, the track past 10 s, at least
/// two weighing down votes, and those at least the share of the room (the listeners, or the
/// weighing voters if more).
@Suite struct DJVoteWeightTests {
    let id = Fixture.stationID
    let tracks = [
        Track(id: "x0", title: "Long", artist: "A", album: "", durationMs: 120_000, source: "http://10.0.0.1/0"),
        Track(id: "x1", title: "Next", artist: "B", album: "", durationMs: 120_000, source: "http://10.0.0.1/1"),
    ]
    static let weightAfterMs: Int64 = 20_000

    func station(weightAfterMs: Int64 = Self.weightAfterMs) -> DJMachine {
        var configuration = Fixture.djConfiguration(queue: tracks)
        configuration.crowdSkipPercent = 50
        configuration.voteWeightAfterNs = Nanos.ms(weightAfterMs)
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    static func crowdSkips(_ effects: [Effect]) -> [TrackSkipped] {
        effects.reports.compactMap {
            if case .trackSkipped(let notice) = $0, notice.reason == .crowd { notice } else { nil }
        }
    }

    /// Listeners that say hello at `fromMs` and a heartbeat every second up to `toMs`; the
    /// crowd skips any of it set off.
    static func listen(
        _ listeners: inout [Peer], on dj: inout DJMachine, fromMs: Int64, toMs: Int64
    ) -> [TrackSkipped] {
        var skips: [TrackSkipped] = []
        for ms in stride(from: fromMs, through: toMs, by: 1000) {
            for index in listeners.indices {
                let message: Message = ms == fromMs ? .hello(Hello(listenerName: "l\(index)")) : .heartbeat(Heartbeat())
                skips += crowdSkips(
                    dj.handle(listeners[index].send(message, station: Fixture.stationID), at: at(ms: ms)))
            }
        }
        return skips
    }

    @Test("a listener's down vote weighs once it has listened 20 s, not 1 ms before, without voting again")
    func weighsAtTheBoundary() {
        var dj = station()
        var listeners = [Peer("10.0.0.10", key: 10), Peer("10.0.0.11", key: 11)]
        #expect(Self.listen(&listeners, on: &dj, fromMs: 1_000, toMs: 11_000).isEmpty)
        for index in listeners.indices {
            let vote = listeners[index].send(.vote(Vote(trackID: "x0", choice: .down)), station: id)
            #expect(Self.crowdSkips(dj.handle(vote, at: at(ms: 11_000))).isEmpty)
        }
        #expect(dj.engine.votes.tally == Tally(down: 2), "the tally shows both votes at once")
        #expect(Self.listen(&listeners, on: &dj, fromMs: 12_000, toMs: 20_000).isEmpty)
        // Present since 1 s: 20 s of it at 21 s. One millisecond short, nothing; at 21 s, the skip.
        #expect(Self.crowdSkips(dj.handle(.timer, at: at(ms: 20_999))).isEmpty)
        #expect(dj.engine.nowPlaying?.id == "x0")
        let skips = Self.crowdSkips(dj.handle(.timer, at: at(ms: 21_000)))
        #expect(skips.map(\.down) == [2] && skips.map(\.room) == [2])
        #expect(dj.engine.nowPlaying?.id == "x1")
    }

    @Test("the default is 20 s, and at 19 s of listening the votes do not weigh")
    func theDefault() {
        #expect(DJMachine.defaultVoteWeightAfterNs == Nanos.seconds(20))
        #expect(Fixture.djConfiguration().voteWeightAfterNs == Nanos.seconds(20))
        var dj = DJMachine(
            configuration: {
                var c = Fixture.djConfiguration(queue: tracks)
                c.crowdSkipPercent = 50
                return c
            }(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        var listeners = [Peer("10.0.0.10", key: 10), Peer("10.0.0.11", key: 11)]
        _ = Self.listen(&listeners, on: &dj, fromMs: 1_000, toMs: 10_000)
        for index in listeners.indices {
            _ = dj.handle(
                listeners[index].send(.vote(Vote(trackID: "x0", choice: .down)), station: id), at: at(ms: 10_500))
        }
        #expect(Self.listen(&listeners, on: &dj, fromMs: 11_000, toMs: 20_000).isEmpty)
        #expect(dj.weighedTally(at: DJTime(ns: at(ms: 20_000).ns)) == Tally(), "19 s of listening")
        #expect(Self.listen(&listeners, on: &dj, fromMs: 21_000, toMs: 21_000).count == 1, "20 s of listening")
    }

    @Test("voters that never listened are counted and shown but never skip, however many")
    func freshVotersNeverWeigh() {
        var dj = station()
        var listeners = [Peer("10.0.0.10", key: 10), Peer("10.0.0.11", key: 11)]
        _ = Self.listen(&listeners, on: &dj, fromMs: 1_000, toMs: 11_000)
        var skips: [TrackSkipped] = []
        for n in 0..<40 {
            var voter = Peer("10.0.1.\(n)", key: UInt8(100 + n))
            skips += Self.crowdSkips(
                dj.handle(voter.send(.vote(Vote(trackID: "x0", choice: .down)), station: id), at: at(ms: 11_100)))
        }
        #expect(dj.engine.votes.tally == Tally(down: 40))
        skips += Self.listen(&listeners, on: &dj, fromMs: 12_000, toMs: 60_000)
        #expect(skips.isEmpty && dj.engine.nowPlaying?.id == "x0", "40 fresh machines skipped the track")
        // The listeners' own votes still skip: the fresh votes neither weigh nor widen the room.
        var skip: [TrackSkipped] = []
        for index in listeners.indices {
            let vote = listeners[index].send(.vote(Vote(trackID: "x0", choice: .down)), station: id)
            skip += Self.crowdSkips(dj.handle(vote, at: at(ms: 60_100)))
        }
        #expect(skip.map(\.down) == [2] && skip.map(\.room) == [2])
    }

    @Test("a silence over 3.5 s starts the machine's presence over")
    func aSilenceStartsOver() {
        var dj = station()
        var listeners = [Peer("10.0.0.10", key: 10), Peer("10.0.0.11", key: 11)]
        _ = Self.listen(&listeners, on: &dj, fromMs: 1_000, toMs: 11_000)
        for index in listeners.indices {
            _ = dj.handle(
                listeners[index].send(.vote(Vote(trackID: "x0", choice: .down)), station: id), at: at(ms: 11_000))
        }
        // Silent from 11 s to 15 s (4 s), then back: present again from 15 s, weighs at 35 s.
        #expect(Self.listen(&listeners, on: &dj, fromMs: 15_000, toMs: 34_000).isEmpty)
        #expect(Self.listen(&listeners, on: &dj, fromMs: 35_000, toMs: 35_000).count == 1)
    }

    @Test("a page open on the station makes its machine present; its vote's answer says when it weighs")
    func anOpenPageIsPresent() {
        var dj = station()
        let guest = testKey(0x51)
        let machine = MachineID.linkLayer("02:00:00:00:00:51")
        var sequence: UInt64 = 10
        func action(_ message: Message, ticket: UInt64?) -> NodeInput {
            sequence += 1
            return .web(
                WebAction(
                    message: message, guest: guest, address: "10.0.2.1", machine: machine, sequence: sequence,
                    ticket: ticket))
        }
        func weighsIn(_ effects: [Effect]) -> UInt32? {
            effects.compactMap { if case .webReply(_, .voteWeighsLater(_, let ms)) = $0 { ms } else { nil } }.first
        }
        // Never seen: the whole wait.
        let first = dj.handle(action(.vote(Vote(trackID: "x0", choice: .up)), ticket: 1), at: at(ms: 1_000))
        #expect(weighsIn(first) == 20_000)
        #expect(dj.engine.votes.tally == Tally(up: 1))
        // Its page open from 2 s, telling so every 1.5 s: at 7 s, 15 s left.
        for ms in stride(from: Int64(2_000), through: 6_500, by: 1_500) {
            _ = dj.handle(action(.query(Query()), ticket: nil), at: at(ms: ms))
        }
        #expect(dj.engine.roster.count == 0, "an open page is no listener")
        let second = dj.handle(action(.vote(Vote(trackID: "x0", choice: .down)), ticket: 2), at: at(ms: 7_000))
        #expect(weighsIn(second) == 15_000)
        for ms in stride(from: Int64(8_000), through: 22_000, by: 1_500) {
            _ = dj.handle(action(.query(Query()), ticket: nil), at: at(ms: ms))
        }
        let third = dj.handle(action(.vote(Vote(trackID: "x0", choice: .down)), ticket: 3), at: at(ms: 22_100))
        #expect(weighsIn(third) == nil)
        #expect(third.contains { if case .webReply(3, .message(.voteAck)) = $0 { true } else { false } })
        #expect(dj.weighedTally(at: DJTime(ns: at(ms: 22_100).ns)) == Tally(down: 1))
    }

    @Test("--vote-weight-after 0: every counted vote weighs at once")
    func zeroTurnsItOff() {
        var dj = station(weightAfterMs: 0)
        var skips: [TrackSkipped] = []
        for n in 0..<2 {
            var voter = Peer("10.0.1.\(n)", key: UInt8(100 + n))
            skips += Self.crowdSkips(
                dj.handle(voter.send(.vote(Vote(trackID: "x0", choice: .down)), station: id), at: at(ms: 11_000)))
        }
        #expect(skips.map(\.down) == [2])
    }

    @Test("presence is bounded, and newcomers never push out a machine that has been present longer")
    func presenceIsBounded() {
        var book = PresenceBook()
        book.heard("old", now: DJTime(ns: 0))
        for n in 0..<(PresenceBook.capacity + 100) {
            book.heard("old", now: DJTime(ns: Int64(n)))
            book.heard("new\(n)", now: DJTime(ns: Int64(n)))
        }
        #expect(book.entries.count == PresenceBook.capacity)
        #expect(book.presentNs("old", now: DJTime(ns: Int64(PresenceBook.capacity + 100))) != nil)
    }
}
