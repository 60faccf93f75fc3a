import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Guests on the web page go through the DJ machine as node guests do: the same tallies, the
/// same one-guest-one-vote rule, limits and mute; only their answers go to the HTTP request.
@Suite struct DJWebGuestTests {
    let id = Fixture.stationID

    func started(votersPerAddress: Int = 1) -> DJMachine {
        var configuration = Fixture.djConfiguration()
        configuration.votersPerAddress = votersPerAddress
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    func web(_ message: Message, guest: UInt8, address: String, sequence: UInt64, ticket: UInt64?) -> NodeInput {
        .web(WebAction(message: message, guest: testKey(guest), address: address, sequence: sequence, ticket: ticket))
    }

    /// The answers to the page; a vote's that does not weigh yet (these guests never listened) as its ack.
    func replies(_ effects: [Effect]) -> [(UInt64, Message)] {
        effects.compactMap {
            switch $0 {
            case .webReply(let ticket, .message(let message)): (ticket, message)
            case .webReply(let ticket, .voteWeighsLater(let ack, _)): (ticket, .voteAck(ack))
            default: nil
            }
        }
    }

    func voteAck(_ effects: [Effect], ticket: UInt64) -> VoteAck? {
        replies(effects).compactMap { if $0.0 == ticket, case .voteAck(let ack) = $0.1 { ack } else { nil } }.first
    }

    @Test func aBrowserVoteAndANodeVoteLandInOneTally() {
        var dj = started()
        let track = dj.engine.nowPlaying!.id
        let out = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 10, ticket: 1),
            at: at(ms: 100))
        #expect(voteAck(out, ticket: 1)?.status == .counted)
        #expect(out.sent.allSatisfy { if case .voteAck = $0.message { false } else { true } })  // no datagram answer
        var bob = Peer("10.0.0.8", key: 8)
        let nodeVote = dj.handle(bob.send(.vote(Vote(trackID: track, choice: .up)), station: id), at: at(ms: 200))
        #expect(dj.engine.votes.tally == Tally(up: 2, down: 0))
        #expect(nodeVote.reports.contains { if case .voteCounted = $0 { true } else { false } })
        // The browser changes its mind: the same guest, so the tally moves, not grows.
        let again = dj.handle(
            web(.vote(Vote(trackID: track, choice: .down)), guest: 7, address: "10.0.0.7", sequence: 11, ticket: 2),
            at: at(ms: 300))
        #expect(voteAck(again, ticket: 2)?.tally == Tally(up: 1, down: 1))
    }

    /// A message's origin says where its answer goes: a web vote is answered to its HTTP request
    /// and never by a datagram, a node's vote by a datagram to the node; each counts once, and only
    /// the node is a peer the DJ says goodbye to.
    @Test func eachOriginIsAnsweredWhereItCameFromAndCountedOnce() {
        var dj = started()
        let track = dj.engine.nowPlaying!.id
        let page = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 10, ticket: 1),
            at: at(ms: 100))
        #expect(replies(page).map(\.0) == [1])
        #expect(page.sent.allSatisfy { $0.to == .group(dj.configuration.advert.group) }, "no datagram to a browser")
        var bob = Peer("10.0.0.8", key: 8)
        let node = dj.handle(bob.send(.vote(Vote(trackID: track, choice: .up)), station: id), at: at(ms: 200))
        #expect(replies(node).isEmpty)
        #expect(
            node.sent.filter { if case .voteAck = $0.message { true } else { false } }.map(\.to) == [.peer(bob.address)]
        )
        #expect(dj.engine.votes.tally == Tally(up: 2, down: 0))
        // Each again (the page replays its sequence, the node votes anew): one vote per guest still.
        _ = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 10, ticket: 2),
            at: at(ms: 300))
        _ = dj.handle(bob.send(.vote(Vote(trackID: track, choice: .up)), station: id), at: at(ms: 400))
        #expect(dj.engine.votes.tally == Tally(up: 2, down: 0))
        let goodbyes = dj.handle(.quit, at: at(ms: 500)).sent.filter {
            if case .goodbye = $0.message { true } else { false }
        }
        #expect(goodbyes.contains { $0.to == .peer(bob.address) })
        #expect(goodbyes.allSatisfy { if case .peer(let peer) = $0.to { peer.host != "10.0.0.7" } else { true } })
    }

    /// A page that only listens sends its hello and vote with no ticket: they count, and nothing
    /// is answered (no HTTP request waits, and a browser takes no datagram).
    @Test func anActionWithoutATicketIsAnsweredNowhere() {
        var dj = started()
        let track = dj.engine.nowPlaying!.id
        let hello = dj.handle(
            web(.hello(Hello(listenerName: "Phone")), guest: 7, address: "10.0.0.7", sequence: 1, ticket: nil),
            at: at(ms: 100))
        let vote = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 2, ticket: nil),
            at: at(ms: 200))
        #expect(dj.engine.roster.count == 1 && dj.engine.votes.tally == Tally(up: 1, down: 0))
        for out in [hello, vote] {
            #expect(!out.contains { if case .webReply = $0 { true } else { false } })
            #expect(out.sent.allSatisfy { if case .peer = $0.to { false } else { true } })
        }
    }

    @Test func freshBrowserCookiesOnOneAddressAreOneVoter() {
        var dj = started()
        let track = dj.engine.nowPlaying!.id
        _ = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 10, ticket: 1),
            at: at(ms: 100))
        let second = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 9, address: "10.0.0.7", sequence: 11, ticket: 2),
            at: at(ms: 200))
        #expect(voteAck(second, ticket: 2)?.status == .addressLimit)
        // A node on the same address is the same rule: refused too.
        var cli = Peer("10.0.0.7", key: 10)
        let node = dj.handle(cli.send(.vote(Vote(trackID: track, choice: .up)), station: id), at: at(ms: 300))
        let nodeAck = node.sent.compactMap { if case .voteAck(let ack) = $0.message { ack } else { nil } }.first
        #expect(nodeAck?.status == .addressLimit)
        #expect(dj.engine.votes.tally == Tally(up: 1, down: 0))
    }

    @Test func aReplayedWebSequenceChangesNothing() {
        var dj = started()
        let track = dj.engine.nowPlaying!.id
        _ = dj.handle(
            web(.vote(Vote(trackID: track, choice: .up)), guest: 7, address: "10.0.0.7", sequence: 10, ticket: 1),
            at: at(ms: 100))
        _ = dj.handle(
            web(.vote(Vote(trackID: track, choice: .down)), guest: 7, address: "10.0.0.7", sequence: 9, ticket: 2),
            at: at(ms: 200))
        #expect(dj.engine.votes.tally == Tally(up: 1, down: 0))
    }

    @Test func requestsAndChatFromTheWebAreAnsweredToTheirTicket() {
        var dj = started()
        let request = dj.handle(
            web(
                .requestSend(RequestSend(requestID: 5, name: "Web Ann", wanted: .library("third"))), guest: 7,
                address: "10.0.0.7", sequence: 5, ticket: 3),
            at: at(ms: 100))
        let ack = replies(request).compactMap { if $0.0 == 3, case .requestAck(let ack) = $0.1 { ack } else { nil } }
            .first
        #expect(ack?.status == .queued)
        #expect(dj.upNext.entries.first?.requester == "Web Ann")
        // Somebody else's vote on it from the page.
        let vote = dj.handle(
            web(
                .requestVote(RequestVote(queueID: ack?.queueID ?? 0, choice: .up)), guest: 8, address: "10.0.0.8",
                sequence: 6, ticket: 4),
            at: at(ms: 200))
        let voteAck = replies(vote).compactMap {
            if $0.0 == 4, case .requestVoteAck(let ack) = $0.1 { ack } else { nil }
        }.first
        #expect(voteAck?.status == .counted)
        let chat = dj.handle(
            web(
                .chatSend(ChatSend(messageID: 7, name: "Web Ann", text: "<script>alert(1)</script>")), guest: 7,
                address: "10.0.0.7", sequence: 7, ticket: 5),
            at: at(ms: 300))
        let chatAck = replies(chat).compactMap { if $0.0 == 5, case .chatAck(let ack) = $0.1 { ack } else { nil } }
            .first
        #expect(chatAck?.status == .delivered)
        // Everyone else hears the line as from any guest, text unchanged (it is shown as text).
        #expect(dj.chat.lines.last?.text == "<script>alert(1)</script>")
        #expect(chat.sent.contains { if case .chatLine = $0.message { true } else { false } })
    }

    @Test func aMutedWebGuestIsRefused() {
        var dj = started()
        _ = dj.handle(
            web(
                .chatSend(ChatSend(messageID: 1, name: "Spammer", text: "buy")), guest: 7, address: "10.0.0.7",
                sequence: 1, ticket: 1),
            at: at(ms: 100))
        _ = dj.handle(.control("mute Spammer"), at: at(ms: 200))
        let out = dj.handle(
            web(
                .chatSend(ChatSend(messageID: 2, name: "Spammer", text: "buy more")), guest: 7, address: "10.0.0.7",
                sequence: 2, ticket: 2),
            at: at(ms: 300))
        let ack = replies(out).compactMap { if case .chatAck(let ack) = $0.1 { ack } else { nil } }.first
        #expect(ack?.status == .muted)
    }

    @Test func aListeningPageCountsAmongTheListenersUntilItStops() {
        var dj = started()
        let out = dj.handle(
            web(.hello(Hello(listenerName: "Phone")), guest: 7, address: "10.0.0.7", sequence: 1, ticket: nil),
            at: at(ms: 100))
        #expect(dj.engine.roster.count == 1)
        #expect(out.sent.allSatisfy { $0.to != .peer(PeerAddress(host: "10.0.0.7", port: 0)) })
        // No heartbeat: gone after the roster's timeout, as a silent node is.
        _ = dj.run(until: at(ms: 5_000), from: at(ms: 100))
        #expect(dj.engine.roster.count == 0)
        _ = dj.handle(
            web(.hello(Hello(listenerName: "Phone")), guest: 7, address: "10.0.0.7", sequence: 2, ticket: nil),
            at: at(ms: 5_100))
        #expect(dj.engine.roster.count == 1)
        _ = dj.handle(web(.leave(Leave()), guest: 7, address: "10.0.0.7", sequence: 3, ticket: nil), at: at(ms: 5_200))
        #expect(dj.engine.roster.count == 0)
    }

    @Test func onlyGuestKindsAreTakenFromTheWeb() {
        var dj = started()
        let out = dj.handle(
            web(.query(Query()), guest: 7, address: "10.0.0.7", sequence: 1, ticket: 1), at: at(ms: 100))
        #expect(replies(out).isEmpty && out.sent.isEmpty)
    }

    @Test func crowdSkipShareIsTheDJsToChange() {
        var dj = started()
        #expect(dj.crowdSkipPercent == 50)
        _ = dj.handle(.control("crowd-skip 25"), at: at(ms: 100))
        #expect(dj.crowdSkipPercent == 25)
        #expect(throws: ControlError.self) { try DJControl.parse(line: "crowd-skip 101") }
        #expect(dj.crowdSkipPercent == 25)
    }
}
