import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Crowd skip at the edges of its rule (docs/PROTOCOL.md, "Skips"): the playing track is skipped
/// once it has played 10 s, has two down votes, and the down votes are at least the configured
/// share of the room, the room being the listeners or the voters if more voted. Each case puts the
/// share exactly on the boundary and one vote short of it.
@Suite struct DJCrowdSkipTests {
    let id = Fixture.stationID
    let tracks = [
        Track(id: "x0", title: "Long", artist: "A", album: "", durationMs: 60_000, source: "http://10.0.0.1/0"),
        Track(id: "x1", title: "Next", artist: "B", album: "", durationMs: 60_000, source: "http://10.0.0.1/1"),
    ]

    /// A DJ at `percent` whose first track started at `t0`, with `listeners` listeners that said
    /// hello at `helloMs`. The crowd's votes weigh after 4 s of presence, and the crowd has had the
    /// page open since the start (docs/SECURITY.md, "Votes weigh after listening"; the rule's own
    /// boundary is `DJVoteWeightTests`).
    func station(percent: Int, listeners: Int, helloMs: Int64 = 10_900) -> DJMachine {
        var configuration = Fixture.djConfiguration(queue: tracks)
        configuration.crowdSkipPercent = percent
        configuration.voteWeightAfterNs = Nanos.seconds(4)
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        Self.openPages(on: &dj, fromMs: 0, throughMs: helloMs)
        for n in 0..<listeners {
            var listener = Peer("10.0.0.\(10 + n)", key: UInt8(10 + n))
            _ = dj.handle(listener.send(.hello(Hello(listenerName: "l\(n)")), station: id), at: at(ms: helloMs))
        }
        #expect(dj.engine.roster.count == listeners)
        return dj
    }

    /// The crowd's pages, open on the station from `fromMs` through `throughMs` (each tells the DJ
    /// every 1.5 s): their machines are present.
    static func openPages(on dj: inout DJMachine, fromMs: Int64, throughMs: Int64) {
        for ms in stride(from: fromMs, through: throughMs, by: 1_500) {
            for voter in Crowd().voters {
                let page = WebAction(
                    message: .query(Query()), guest: voter.publicKey, address: voter.address.host,
                    machine: .address(voter.address.host), sequence: UInt64(ms), ticket: nil)
                _ = dj.handle(.web(page), at: at(ms: ms))
            }
        }
    }

    /// Voters (not listeners), each on its own machine, voting on the first track in turn from `ms`.
    struct Crowd {
        var voters = (0..<40).map { Peer("10.0.1.\($0)", key: UInt8(100 + $0)) }
        var next = 0

        /// The crowd skips `vote` asks for, if any, from the next voter.
        mutating func vote(_ choice: VoteChoice, on dj: inout DJMachine, atMs ms: Int64) -> [TrackSkipped] {
            defer { next += 1 }
            let input = voters[next].send(.vote(Vote(trackID: "x0", choice: choice)), station: Fixture.stationID)
            return Self.skips(dj.handle(input, at: at(ms: ms)))
        }

        static func skips(_ effects: [Effect]) -> [TrackSkipped] {
            effects.reports.compactMap {
                if case .trackSkipped(let notice) = $0, notice.reason == .crowd { notice } else { nil }
            }
        }
    }

    @Test(
        "exactly the share of the listeners voting down skips; one down vote fewer does not",
        arguments: [
            (percent: 50, listeners: 4, needed: 2), (50, 6, 3), (25, 8, 2), (30, 10, 3), (100, 3, 3), (100, 2, 2),
            (1, 2, 2),
        ])
    func theShareSkipsAndOneFewerDoesNot(percent: Int, listeners: Int, needed: Int) {
        var dj = station(percent: percent, listeners: listeners)
        var crowd = Crowd()
        for n in 0..<needed - 1 {
            #expect(crowd.vote(.down, on: &dj, atMs: 11_000 + Int64(n)).isEmpty, "skipped at \(n + 1) of \(needed)")
        }
        #expect(dj.engine.nowPlaying?.id == "x0")
        let skips = crowd.vote(.down, on: &dj, atMs: 11_500)
        #expect(skips.map(\.down) == [UInt32(needed)] && skips.map(\.room) == [UInt32(listeners)])
        #expect(dj.engine.nowPlaying?.id == "x1" && dj.engine.votes.tally == Tally())
    }

    @Test("the room is the voters when more vote than listen")
    func moreVotersThanListeners() {
        // One listener; four voters, two of them down: 2 of a room of 4 is 50 %.
        var dj = station(percent: 50, listeners: 1)
        var crowd = Crowd()
        for choice in [VoteChoice.up, .up, .down] { #expect(crowd.vote(choice, on: &dj, atMs: 11_000).isEmpty) }
        let skips = crowd.vote(.down, on: &dj, atMs: 11_100)
        #expect(skips.map(\.down) == [2] && skips.map(\.room) == [4])
        // Three up and two down: 2 of a room of 5 is under 50 %.
        var close = station(percent: 50, listeners: 1)
        var others = Crowd()
        for choice in [VoteChoice.up, .up, .up, .down, .down] {
            #expect(others.vote(choice, on: &close, atMs: 11_000).isEmpty)
        }
        #expect(close.engine.nowPlaying?.id == "x0" && close.engine.votes.tally == Tally(up: 3, down: 2))
    }

    @Test("one down vote never skips, however small the room")
    func twoDownVotesAtLeast() {
        var dj = station(percent: 50, listeners: 1)
        var crowd = Crowd()
        #expect(crowd.vote(.down, on: &dj, atMs: 11_000).isEmpty)
        #expect(Crowd.skips(dj.handle(.timer, at: at(ms: 11_300))).isEmpty)
        #expect(crowd.vote(.down, on: &dj, atMs: 11_400).map(\.down) == [2])
    }

    @Test("not before the track has played 10 s: the tick at 10 s skips")
    func notBeforeTenSeconds() {
        var dj = station(percent: 50, listeners: 2, helloMs: 4_900)
        var crowd = Crowd()
        #expect(crowd.vote(.down, on: &dj, atMs: 5_000).isEmpty)
        #expect(crowd.vote(.down, on: &dj, atMs: 5_001).isEmpty)
        Self.openPages(on: &dj, fromMs: 6_000, throughMs: 9_000)
        #expect(Crowd.skips(dj.handle(.timer, at: at(ms: 9_999))).isEmpty)
        #expect(Crowd.skips(dj.handle(.timer, at: at(ms: 10_000))).map(\.down) == [2])
    }

    @Test("not while paused, and never when off")
    func notPausedNorOff() {
        var dj = station(percent: 50, listeners: 2)
        _ = dj.handle(.control("pause"), at: at(ms: 10_950))
        var crowd = Crowd()
        #expect(crowd.vote(.down, on: &dj, atMs: 11_000).isEmpty)
        #expect(crowd.vote(.down, on: &dj, atMs: 11_001).isEmpty)
        #expect(Crowd.skips(dj.handle(.control("resume"), at: at(ms: 11_100))).map(\.down) == [2])

        var off = station(percent: 0, listeners: 2)
        var everyone = Crowd()
        for n in 0..<6 { #expect(everyone.vote(.down, on: &off, atMs: 11_000 + Int64(n)).isEmpty) }
        #expect(off.engine.nowPlaying?.id == "x0")
    }
}
