import Foundation
import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// One machine, many addresses and keys (issue 27, attacks 3 and 4): the DJ counts voters, chat
/// rates, requests and mutes per machine — the sender's link-layer address as the runtime found it —
/// as well as per key, so fresh keys from aliases of one machine are one guest.
@Suite struct GuestMachineTests {
    let id = Fixture.stationID
    static let hostile = MachineID.linkLayer("02:00:00:00:00:66")
    static let friendly = MachineID.linkLayer("02:00:00:00:00:01")

    func started(crowdSkipPercent: Int = 50) -> DJMachine {
        var configuration = Fixture.djConfiguration()
        configuration.crowdSkipPercent = crowdSkipPercent
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    /// A guest with a key of its own (from `n`) at `host`.
    static func guest(_ n: Int, host: String) -> Peer {
        Peer(address: PeerAddress(host: host, port: 40_100), publicKey: PublicKey(bytes: key(n))!)
    }

    static func key(_ n: Int) -> [UInt8] {
        [0x5A, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + [UInt8](repeating: 0x33, count: 29)
    }

    /// `message` from `peer`, with the machine the runtime found for it.
    static func input(_ message: Message, from peer: inout Peer, machine: MachineID?) -> NodeInput {
        .datagram(peer.bytes(message, station: Fixture.stationID), from: peer.address, machine: machine)
    }

    static func chat(_ id: UInt64, _ name: String, _ text: String) -> Message {
        .chatSend(ChatSend(messageID: id, name: name, text: text))
    }

    func voteAcks(_ effects: [Effect]) -> [VoteAck] {
        effects.sent.compactMap { if case .voteAck(let ack) = $0.message { ack } else { nil } }
    }

    func chatAcks(_ effects: [Effect]) -> [ChatAck] {
        effects.sent.compactMap { if case .chatAck(let ack) = $0.message { ack } else { nil } }
    }

    @Test func freshKeysFromAliasesOfOneMachineAreOneVoter() {
        var dj = started()
        var statuses: [VoteAck.Status] = []
        for n in 0..<64 {
            var alias = Self.guest(n, host: "10.0.0.\(100 + n)")
            let vote = Message.vote(Vote(trackID: "t0", choice: .down))
            let out = dj.handle(Self.input(vote, from: &alias, machine: Self.hostile), at: at(ms: 100 + Int64(n)))
            statuses += voteAcks(out).map(\.status)
        }
        #expect(statuses.count == 64)
        #expect(statuses.first == .counted && statuses.dropFirst().allSatisfy { $0 == .addressLimit })
        #expect(dj.engine.votes.tally == Tally(up: 0, down: 1))
        // Another machine's vote still counts.
        var friend = Self.guest(1000, host: "10.0.0.7")
        let out = dj.handle(
            Self.input(.vote(Vote(trackID: "t0", choice: .up)), from: &friend, machine: Self.friendly), at: at(ms: 300))
        #expect(voteAcks(out).map(\.status) == [.counted])
        #expect(dj.engine.votes.tally == Tally(up: 1, down: 1))
    }

    @Test func aMachineNotYetKnownWaitsForItsRetry() {
        var dj = started()
        var guest = Self.guest(1, host: "10.0.0.9")
        let vote = Message.vote(Vote(trackID: "t0", choice: .up))
        let early = dj.handle(Self.input(vote, from: &guest, machine: .unresolved("10.0.0.9")), at: at(ms: 100))
        #expect(voteAcks(early).isEmpty, "nothing is counted, nor answered, for a machine not known yet")
        #expect(dj.engine.votes.tally == Tally())
        let chat = dj.handle(
            Self.input(Self.chat(1, "Ann", "hi"), from: &guest, machine: .unresolved("10.0.0.9")), at: at(ms: 150))
        #expect(chatAcks(chat).isEmpty && dj.chat.lines.isEmpty)
        // The retry, once the neighbour table knows the machine.
        let retry = dj.handle(Self.input(vote, from: &guest, machine: Self.friendly), at: at(ms: 300))
        #expect(voteAcks(retry).map(\.status) == [.counted])
    }

    @Test func chatFromFreshKeysIsRateLimitedPerMachineAndRealLinesStay() {
        var dj = started()
        var delivered: [String] = []
        var friend = Self.guest(9999, host: "10.0.0.7")
        // 500 lines in 3 s, each from a fresh key on one machine's aliases; a real guest says three.
        for n in 0..<500 {
            var spammer = Self.guest(n, host: "10.0.0.\(100 + n % 64)")
            let out = dj.handle(
                Self.input(Self.chat(1, "spam\(n)", "buy now \(n)"), from: &spammer, machine: Self.hostile),
                at: at(ms: 100 + Int64(n) * 6))
            delivered += out.sent.compactMap { if case .chatLine(let line) = $0.message { line.text } else { nil } }
            if n % 150 == 0 {
                let real = dj.handle(
                    Self.input(
                        Self.chat(UInt64(n + 1), "Ann", "real line \(n)"), from: &friend, machine: Self.friendly),
                    at: at(ms: 101 + Int64(n) * 6))
                #expect(chatAcks(real).map(\.status) == [.delivered])
            }
        }
        let spam = Set(delivered.filter { $0.hasPrefix("buy now") })
        #expect(spam.count == ChatBook.rateLimit, "one machine delivers the limit per 10 s, whatever its keys")
        #expect(dj.chat.lines.map(\.text).filter { $0.hasPrefix("real line") }.count == 4)
    }

    @Test func webPostsWithoutACookieAreOneMachine() {
        var dj = started()
        var statuses: [ChatAck.Status] = []
        for n in 0..<30 {
            let action = WebAction(
                message: Self.chat(UInt64(n + 1), "", "post \(n)"), guest: PublicKey(bytes: Self.key(n))!,
                address: "10.0.0.\(100 + n)", machine: Self.hostile, sequence: UInt64(n + 1), ticket: UInt64(n + 1))
            for effect in dj.handle(.web(action), at: at(ms: 100 + Int64(n))) {
                if case .webReply(_, .message(.chatAck(let ack))) = effect { statuses.append(ack.status) }
            }
        }
        #expect(statuses.filter { $0 == .delivered }.count == ChatBook.rateLimit)
        #expect(statuses.filter { $0 == .rateLimited }.count == 30 - ChatBook.rateLimit)
    }

    @Test func muteFollowsTheMachineAcrossKeysAndNames() {
        var dj = started()
        var first = Self.guest(1, host: "10.0.0.50")
        _ = dj.handle(Self.input(Self.chat(1, "spam", "first"), from: &first, machine: Self.hostile), at: at(ms: 100))
        let muted = dj.handle(.control("mute spam"), at: at(ms: 200))
        #expect(muted.warnings.isEmpty)
        // A fresh key on another alias of the same machine, under the same name and under another.
        for (n, name) in [(2, "spam"), (3, "friendly")] {
            var fresh = Self.guest(n, host: "10.0.0.\(50 + n)")
            let chat = dj.handle(
                Self.input(Self.chat(1, name, "again"), from: &fresh, machine: Self.hostile), at: at(ms: 300 + Int64(n))
            )
            #expect(chatAcks(chat).map(\.status) == [.muted], "\(name)")
            let request = dj.handle(
                Self.input(
                    .requestSend(RequestSend(requestID: 1, name: name, wanted: .library("second"))), from: &fresh,
                    machine: Self.hostile), at: at(ms: 310 + Int64(n)))
            let statuses: [RequestAck.Status] = request.sent.compactMap {
                if case .requestAck(let ack) = $0.message { ack.status } else { nil }
            }
            #expect(statuses == [.muted])
        }
        // Another machine is not muted; unmuting the name frees the machine.
        var friend = Self.guest(4, host: "10.0.0.7")
        let other = dj.handle(
            Self.input(Self.chat(1, "Ann", "hi"), from: &friend, machine: Self.friendly), at: at(ms: 400))
        #expect(chatAcks(other).map(\.status) == [.delivered])
        _ = dj.handle(.control("unmute spam"), at: at(ms: 500))
        var later = Self.guest(5, host: "10.0.0.60")
        let freed = dj.handle(
            Self.input(Self.chat(1, "spam", "sorry"), from: &later, machine: Self.hostile), at: at(ms: 600))
        #expect(chatAcks(freed).map(\.status) == [.delivered])
    }

    /// Crowd skip's room is the machines listening (docs/SECURITY.md, "One machine, many
    /// addresses"): one machine's 21 fresh-key hellos from its aliases and a page that posts
    /// without its cookie make 22 listeners on the list, and one in the room, so two real listeners
    /// voting down still make half of the room.
    @Test func freshListenerKeysOfOneMachineAreOneInCrowdSkipsRoom() {
        var configuration = Fixture.djConfiguration(queue: [
            Track(id: "x0", title: "Long", artist: "A", album: "", durationMs: 60_000, source: "http://10.0.0.1/0"),
            Track(id: "x1", title: "Next", artist: "B", album: "", durationMs: 60_000, source: "http://10.0.0.1/1"),
        ])
        configuration.voteWeightAfterNs = 0
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        for n in 0..<21 {
            var alias = Self.guest(200 + n, host: "10.0.0.\(100 + n)")
            _ = dj.handle(
                Self.input(.hello(Hello(listenerName: "fresh \(n)")), from: &alias, machine: Self.hostile),
                at: at(ms: 10_500 + Int64(n)))
        }
        let page = WebAction(
            message: .hello(Hello(listenerName: "page")), guest: PublicKey(bytes: Self.key(300))!,
            address: "10.0.0.130", machine: Self.hostile, sequence: 1, ticket: nil)
        _ = dj.handle(.web(page), at: at(ms: 10_600))
        var friends = [Self.guest(1, host: "10.0.0.7"), Self.guest(2, host: "10.0.0.8")]
        let machines = [Self.friendly, MachineID.linkLayer("02:00:00:00:00:02")]
        for index in friends.indices {
            _ = dj.handle(
                Self.input(
                    .hello(Hello(listenerName: "friend \(index)")), from: &friends[index], machine: machines[index]),
                at: at(ms: 10_700))
        }
        #expect(dj.engine.roster.count == 24, "every listener is listed")
        #expect(dj.listenerRoom == 3, "one machine, one listener in the room")
        var skips: [TrackSkipped] = []
        for index in friends.indices {
            let out = dj.handle(
                Self.input(.vote(Vote(trackID: "x0", choice: .down)), from: &friends[index], machine: machines[index]),
                at: at(ms: 11_000 + Int64(index)))
            skips += out.reports.compactMap { if case .trackSkipped(let notice) = $0 { notice } else { nil } }
        }
        skips += dj.handle(.timer, at: at(ms: 11_100)).reports.compactMap {
            if case .trackSkipped(let notice) = $0 { notice } else { nil }
        }
        #expect(skips.map(\.reason) == [.crowd])
        #expect(skips.first.map { ($0.down, $0.room) } ?? (0, 0) == (2, 3))
        #expect(dj.engine.nowPlaying?.id == "x1")
    }

    /// Two guests on two machines may give one name: `mute NAME` then names nobody for sure, so it is
    /// refused with the fingerprints (and machines) to choose from, and nobody is muted; one guest
    /// whose two keys (`listen` and `chat` sign with two) are on one machine is still one guest.
    @Test func muteByANameTwoMachinesShareIsRefusedWithTheChoices() {
        var dj = started()
        var first = Self.guest(1, host: "10.0.0.50")
        var second = Self.guest(2, host: "10.0.0.51")
        _ = dj.handle(Self.input(Self.chat(1, "Sam", "hi"), from: &first, machine: Self.hostile), at: at(ms: 100))
        _ = dj.handle(Self.input(Self.chat(1, "Sam", "hey"), from: &second, machine: Self.friendly), at: at(ms: 110))
        let refused = dj.handle(.control("mute Sam"), at: at(ms: 200))
        #expect(refused.warnings.count == 1)
        let warning = refused.warnings.first ?? ""
        #expect(warning.contains("2 guests are called 'Sam'") && warning.contains("mute FINGERPRINT"), "\(warning)")
        #expect(warning.contains(first.publicKey.fingerprint) && warning.contains(second.publicKey.fingerprint))
        #expect(warning.contains("02:00:00:00:00:66") && warning.contains("02:00:00:00:00:01"), "\(warning)")
        #expect(dj.chat.muted.isEmpty && dj.chat.mutedMachines.isEmpty, "nobody is muted on a guess")
        // The fingerprint names one of them.
        #expect(dj.handle(.control("mute \(first.publicKey.fingerprint)"), at: at(ms: 300)).warnings.isEmpty)
        let muted = dj.handle(
            Self.input(Self.chat(2, "Sam", "again"), from: &first, machine: Self.hostile), at: at(ms: 400))
        let open = dj.handle(
            Self.input(Self.chat(2, "Sam", "still here"), from: &second, machine: Self.friendly), at: at(ms: 410))
        #expect(chatAcks(muted).map(\.status) == [.muted] && chatAcks(open).map(\.status) == [.delivered])
        // One guest listening under a name and chatting with another key, from one machine: one guest.
        var listener = Self.guest(3, host: "10.0.0.60")
        var chatter = Self.guest(4, host: "10.0.0.60")
        let machine = MachineID.linkLayer("02:00:00:00:00:03")
        _ = dj.handle(
            Self.input(.hello(Hello(listenerName: "Kim")), from: &listener, machine: machine), at: at(ms: 500))
        _ = dj.handle(Self.input(Self.chat(1, "Kim", "yo"), from: &chatter, machine: machine), at: at(ms: 510))
        #expect(dj.handle(.control("mute Kim"), at: at(ms: 600)).warnings.isEmpty)
        #expect(dj.chat.muted.isSuperset(of: [listener.publicKey.fingerprint, chatter.publicKey.fingerprint]))
    }

    /// The DJ's page gets what the terminal says of its control: a `mute` by a name guests on two
    /// machines gave is refused (not ok) with both fingerprints, in the answer to that request.
    @Test func thePageHearsWhyAMuteWasRefused() {
        var dj = started()
        var first = Self.guest(1, host: "10.0.0.50")
        var second = Self.guest(2, host: "10.0.0.51")
        _ = dj.handle(Self.input(Self.chat(1, "Sam", "hi"), from: &first, machine: Self.hostile), at: at(ms: 100))
        _ = dj.handle(Self.input(Self.chat(1, "Sam", "hey"), from: &second, machine: Self.friendly), at: at(ms: 110))
        func replies(_ out: [Effect]) -> [(UInt64, WebReply)] {
            out.compactMap { if case .webReply(let ticket, let reply) = $0 { (ticket, reply) } else { nil } }
        }
        let refused = replies(dj.handle(.webDJControl(.mute("Sam"), ticket: 7), at: at(ms: 200)))
        #expect(refused.count == 1 && refused.first?.0 == 7)
        guard case .djOutcome(let text, let ok)? = refused.first?.1 else {
            Issue.record("no outcome: \(refused)")
            return
        }
        #expect(!ok, "refused")
        #expect(text.contains(first.publicKey.fingerprint) && text.contains(second.publicKey.fingerprint), "\(text)")
        #expect(dj.chat.muted.isEmpty)
        let done = replies(dj.handle(.webDJControl(.mute(first.publicKey.fingerprint), ticket: 8), at: at(ms: 300)))
        guard case .djOutcome(let doneText, let doneOK)? = done.first?.1, done.first?.0 == 8 else {
            Issue.record("no outcome: \(done)")
            return
        }
        #expect(doneOK && doneText.hasPrefix("Muted"), "\(doneText)")
    }

    @Test func aMutedMachineSurvivesASave() throws {
        var book = ChatBook()
        book.mute(fingerprint: "00112233aabbccdd", machine: Self.hostile.key)
        let decoded = try JSONDecoder().decode(ChatBook.self, from: try JSONEncoder().encode(book))
        #expect(decoded.isMuted("ffffffffffffffff", machine: Self.hostile.key))
        #expect(decoded == book)
        // A book saved before machines were muted.
        let old = #"{"senders":[],"muted":["00112233aabbccdd"],"lines":[]}"#
        let older = try JSONDecoder().decode(ChatBook.self, from: Data(old.utf8))
        #expect(older.muted == ["00112233aabbccdd"] && older.mutedMachines.isEmpty)
    }
}
