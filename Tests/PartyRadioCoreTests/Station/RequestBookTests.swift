import Foundation
import Testing

@testable import PartyRadioCore

/// The guests' requests as pure state: admission, answers to retries, order, limits, modes.
@Suite struct RequestBookTests {
    let alice = testKey(0xA1)
    let bob = testKey(0xB0)
    let carol = testKey(0xC0)

    static func track(_ n: Int) -> Track {
        Track(id: "c\(n)", title: "Song \(n)", artist: "Band", album: "", durationMs: 60_000, source: "http://x/\(n)")
    }

    func send(_ id: UInt64, _ wanted: RequestSend.Wanted = .catalogID("c1")) -> RequestSend {
        RequestSend(requestID: id, name: "guest", wanted: wanted)
    }

    /// Admits and resolves one request (each guest on its own machine); returns the answer.
    func request(_ book: inout RequestBook, _ id: UInt64, from guest: PublicKey, track n: Int) -> RequestAck? {
        let address = guest.fingerprint
        switch book.admit(send(id, .catalogID("c\(n)")), from: guest, address: address, nowNs: Int64(id)) {
        case .answer(let ack): return ack
        case .inProgress: return nil
        case .resolve:
            return book.resolved(requestID: id, from: guest, address: address, name: "guest", track: Self.track(n))
        }
    }

    @Test func aRequestIsQueuedOnceAndItsRetryGetsTheSameAnswer() {
        var book = RequestBook()
        #expect(book.admit(send(10), from: alice, nowNs: 0) == .resolve)
        // A retry while the DJ still looks the track up: no answer yet, nothing queued twice.
        #expect(book.admit(send(10), from: alice, nowNs: 1) == .inProgress)
        let ack = book.resolved(requestID: 10, from: alice, name: "Alice", track: Self.track(1))
        #expect(ack?.status == .queued && ack?.queueID == 1 && ack?.position == 1 && ack?.title == "Song 1")
        #expect(book.admit(send(10), from: alice, nowNs: 2) == .answer(ack!))
        // An older ID is stale; the answer to a resolved request is not given twice.
        #expect(book.admit(send(9), from: alice, nowNs: 3) == .answer(RequestAck(requestID: 9, status: .stale)))
        #expect(book.resolved(requestID: 10, from: alice, name: "Alice", track: Self.track(1)) == nil)
        #expect(book.waiting.map(\.queueID) == [1])
        #expect(book.waiting.first?.requesterName == "Alice")
    }

    @Test func votesOrderTheRequestsThenAge() {
        var book = RequestBook(maxPerGuest: 5)
        for n in 1...3 { _ = request(&book, UInt64(n), from: alice, track: n) }
        #expect(book.ordered.map(\.queueID) == [1, 2, 3])
        let up = book.vote(RequestVote(queueID: 3, choice: .up), from: bob, sequence: 77)
        #expect(up.status == .counted && up.position == 1 && up.tally == Tally(up: 1) && up.voteSequence == 77)
        _ = book.vote(RequestVote(queueID: 1, choice: .down), from: bob, sequence: 78)
        #expect(book.ordered.map(\.queueID) == [3, 2, 1])
        // One vote per key: changing it replaces it; clearing removes it.
        _ = book.vote(RequestVote(queueID: 3, choice: .up), from: bob, sequence: 79)
        #expect(book.waiting.first { $0.queueID == 3 }?.tally == Tally(up: 1))
        _ = book.vote(RequestVote(queueID: 1, choice: .clear), from: bob, sequence: 80)
        #expect(book.ordered.map(\.queueID) == [3, 1, 2])
        #expect(book.next?.queueID == 3)
    }

    /// The order at its edges: one vote outranks any age, equal scores go by age (up and down
    /// cancel), and a vote from a second guest counts as much as the first.
    @Test func oneVoteOutranksAgeAndEqualScoresGoByAge() {
        var book = RequestBook(maxPerGuest: 5)
        for n in 1...3 { _ = request(&book, UInt64(n), from: alice, track: n) }
        _ = book.vote(RequestVote(queueID: 3, choice: .up), from: bob, address: "b", sequence: 1)
        #expect(book.ordered.map(\.queueID) == [3, 1, 2])
        #expect(book.next?.queueID == 3 && book.position(of: 1) == 2)
        // The oldest one up too: the tie goes to the older.
        _ = book.vote(RequestVote(queueID: 1, choice: .up), from: bob, address: "b", sequence: 2)
        #expect(book.ordered.map(\.queueID) == [1, 3, 2])
        // A down vote on the newest: up and down cancel, and it goes after the older one at zero.
        _ = book.vote(RequestVote(queueID: 3, choice: .down), from: carol, address: "c", sequence: 3)
        #expect(book.ordered.map(\.queueID) == [1, 2, 3])
        // The middle one down: below zero, last.
        _ = book.vote(RequestVote(queueID: 2, choice: .down), from: carol, address: "c", sequence: 4)
        #expect(book.ordered.map(\.queueID) == [1, 3, 2])
        #expect(book.list(upcoming: []).entries.map(\.queueID) == [1, 3, 2])
    }

    @Test func theSameTrackTwiceCountsAsAnUpVote() {
        var book = RequestBook()
        _ = request(&book, 1, from: alice, track: 7)
        let again = request(&book, 1, from: bob, track: 7)
        #expect(again?.status == .alreadyQueued && again?.queueID == 1)
        #expect(book.waiting.count == 1 && book.waiting[0].tally == Tally(up: 1))
    }

    @Test func thePerGuestLimitCountsWaitingRequestsOnly() {
        var book = RequestBook(maxPerGuest: 2)
        #expect(request(&book, 1, from: alice, track: 1)?.status == .queued)
        #expect(request(&book, 2, from: alice, track: 2)?.status == .queued)
        let third = request(&book, 3, from: alice, track: 3)
        #expect(third?.status == .overLimit && third?.limit == 2)
        #expect(request(&book, 1, from: bob, track: 3)?.status == .queued)  // others are not limited by Alice
        book.played(1)
        #expect(request(&book, 4, from: alice, track: 3)?.status == .alreadyQueued)
        #expect(request(&book, 5, from: alice, track: 4)?.status == .queued)
    }

    @Test func modesOffAndApprove() {
        var off = RequestBook(mode: .off)
        #expect(request(&off, 1, from: alice, track: 1)?.status == .requestsOff)
        #expect(off.waiting.isEmpty)

        var approve = RequestBook(mode: .approve)
        let ack = request(&approve, 1, from: alice, track: 1)
        #expect(ack?.status == .awaitingApproval && approve.next == nil)
        #expect(approve.approve(1) && !approve.approve(1))
        #expect(approve.next?.queueID == 1)
        // Approved requests play before those still waiting for approval, whatever the votes.
        _ = request(&approve, 1, from: bob, track: 2)
        _ = approve.vote(RequestVote(queueID: 2, choice: .up), from: carol, sequence: 1)
        #expect(approve.ordered.map(\.queueID) == [1, 2])
    }

    @Test func votesOnFinishedRequestsSayWhatBecameOfThem() {
        var book = RequestBook()
        _ = request(&book, 1, from: alice, track: 1)
        _ = request(&book, 2, from: alice, track: 2)
        book.played(1)
        book.drop(2)
        #expect(book.vote(RequestVote(queueID: 1, choice: .up), from: bob, sequence: 1).status == .played)
        #expect(book.vote(RequestVote(queueID: 2, choice: .up), from: bob, sequence: 2).status == .dropped)
        #expect(book.vote(RequestVote(queueID: 99, choice: .up), from: bob, sequence: 3).status == .unknown)
        #expect(book.waiting.isEmpty)
    }

    @Test func aFailedLookupMayBeTriedAgainWithTheSameID() {
        var book = RequestBook()
        #expect(book.admit(send(5), from: alice, nowNs: 0) == .resolve)
        let failed = book.resolved(requestID: 5, from: alice, name: "A", track: nil, unavailable: true)
        #expect(failed?.status == .unavailable)
        #expect(book.admit(send(5), from: alice, nowNs: 1) == .resolve)
        let unknown = book.resolved(requestID: 5, from: alice, name: "A", track: nil)
        #expect(unknown?.status == .unknownTrack)
        #expect(book.admit(send(5), from: alice, nowNs: 2) == .answer(unknown!))
    }

    @Test func malformedRequestsAreRejectedBeforeAnyLookup() {
        var book = RequestBook()
        for wanted in [
            RequestSend.Wanted.catalogID(""), .library("   "), .catalogID(String(repeating: "9", count: 65)),
        ] {
            guard
                case .answer(let ack) = book.admit(
                    RequestSend(requestID: 1, name: "", wanted: wanted), from: carol, nowNs: 0)
            else {
                Issue.record("\(wanted) was admitted")
                continue
            }
            #expect(ack.status == .rejected)
            book = RequestBook()
        }
    }

    @Test func whatIsKeptIsBounded() {
        var book = RequestBook(maxPerGuest: 1)
        for n in 0..<(RequestBook.maxWaiting + 20) {
            _ = request(
                &book, 1,
                from: PublicKey(
                    bytes: withUnsafeBytes(of: UInt64(n)) { Array($0) } + [UInt8](repeating: 1, count: 24))!, track: n)
        }
        #expect(book.waiting.count == RequestBook.maxWaiting)
        for n in 0..<RequestBook.maxWaiting { book.drop(UInt32(n + 1)) }
        #expect(book.waiting.isEmpty)
    }

    @Test func theListCarriesRequestsThenTheQueueAndFitsADatagram() throws {
        var book = RequestBook(maxPerGuest: 50)
        for n in 0..<40 { _ = request(&book, UInt64(n + 1), from: alice, track: n) }
        let list = book.list(upcoming: [Self.track(100), Self.track(101)])
        #expect(list.total == 40 && list.entries.count == 42)
        #expect(list.entries.last?.isRequest == false && list.entries.first?.requester == "guest")
        let bytes = try Datagram.encode(
            .queueList(list), stationID: StationID(rawValue: 1), sequence: 1, signer: FakeSigner(1))
        #expect(bytes.count <= Datagram.maxSize)
        guard case .queueList(let decoded) = try Datagram.decode(bytes).message else {
            Issue.record("not a queue list")
            return
        }
        #expect(
            decoded.total == 40 && !decoded.entries.isEmpty
                && decoded.entries == Array(list.entries.prefix(decoded.entries.count)))
    }

    @Test func itSurvivesEncodingForTheSavedStation() throws {
        var book = RequestBook(mode: .approve, maxPerGuest: 4)
        _ = request(&book, 1, from: alice, track: 1)
        _ = request(&book, 2, from: alice, track: 2)
        _ = book.vote(RequestVote(queueID: 2, choice: .up), from: bob, sequence: 1)
        book.drop(1)
        let decoded = try JSONDecoder().decode(RequestBook.self, from: JSONEncoder().encode(book))
        #expect(decoded == book)
        // The retry of an answered request still gets its answer after a restart.
        var restored = decoded
        guard case .answer(let ack) = restored.admit(send(2, .catalogID("c2")), from: alice, nowNs: 9) else {
            Issue.record("the retry was not answered from the saved state")
            return
        }
        #expect(ack.queueID == 2)
    }
}

/// One guest, one vote: voter keys are counted per source address.
@Suite struct OneGuestOneVoteTests {
    @Test func aSecondKeyFromOneAddressIsNotCountedOnATrack() {
        var book = VoteBook(trackID: "t")
        let (a, b, c) = (testKey(1), testKey(2), testKey(3))
        #expect(book.apply(voter: a, trackID: "t", choice: .up, from: "10.0.0.8", votersPerAddress: 1) == .counted)
        #expect(book.apply(voter: b, trackID: "t", choice: .up, from: "10.0.0.8", votersPerAddress: 1) == .addressLimit)
        #expect(book.apply(voter: c, trackID: "t", choice: .up, from: "10.0.0.9", votersPerAddress: 1) == .counted)
        // The counted key may change its vote; clearing it frees the address for another key.
        #expect(book.apply(voter: a, trackID: "t", choice: .down, from: "10.0.0.8", votersPerAddress: 1) == .counted)
        #expect(book.tally == Tally(up: 1, down: 1))
        #expect(book.apply(voter: a, trackID: "t", choice: .clear, from: "10.0.0.8", votersPerAddress: 1) == .counted)
        #expect(book.apply(voter: b, trackID: "t", choice: .up, from: "10.0.0.8", votersPerAddress: 1) == .counted)
        // A new track: every address starts again.
        book.reset(trackID: "u")
        #expect(book.apply(voter: a, trackID: "u", choice: .up, from: "10.0.0.8", votersPerAddress: 1) == .counted)
        // 5,000 fresh keys from one address: one counted.
        var stuffed = VoteBook(trackID: "t")
        var counted = 0
        for n in 0..<5000 {
            let key = PublicKey(bytes: withUnsafeBytes(of: UInt64(n)) { Array($0) } + [UInt8](repeating: 7, count: 24))!
            if stuffed.apply(voter: key, trackID: "t", choice: .up, from: "10.0.0.66", votersPerAddress: 1) == .counted
            {
                counted += 1
            }
        }
        #expect(counted == 1 && stuffed.tally == Tally(up: 1))
    }

    @Test func requestsAndTheirVotesCountAddressesToo() {
        var book = RequestBook(maxPerGuest: 2, votersPerAddress: 1)
        func request(_ id: UInt64, _ guest: PublicKey, _ address: String, track n: Int) -> RequestAck.Status? {
            guard
                case .resolve = book.admit(
                    RequestSend(requestID: id, name: "g", wanted: .catalogID("c\(n)")), from: guest, address: address,
                    nowNs: 0)
            else { return nil }
            return book.resolved(
                requestID: id, from: guest, address: address, name: "g", track: RequestBookTests.track(n))?.status
        }
        let (a, b, c) = (testKey(1), testKey(2), testKey(3))
        #expect(request(1, a, "10.0.0.8", track: 1) == .queued)
        #expect(request(2, a, "10.0.0.8", track: 2) == .queued)
        // A fresh key on the same machine cannot add past the address's share.
        guard
            case .answer(let ack) = book.admit(
                RequestSend(requestID: 1, name: "g", wanted: .catalogID("c3")), from: b, address: "10.0.0.8", nowNs: 0)
        else {
            Issue.record("admitted past the address limit")
            return
        }
        #expect(ack.status == .addressLimit)
        #expect(request(1, c, "10.0.0.9", track: 3) == .queued)
        // Votes on a request: one per address.
        #expect(
            book.vote(RequestVote(queueID: 3, choice: .up), from: a, address: "10.0.0.8", sequence: 1).status
                == .counted)
        #expect(
            book.vote(RequestVote(queueID: 3, choice: .up), from: b, address: "10.0.0.8", sequence: 2).status
                == .addressLimit)
        #expect(book.waiting.first { $0.queueID == 3 }?.tally == Tally(up: 1))
    }
}

/// Votes replayed after a restart (the replay windows are empty then) change nothing.
@Suite struct VoteReplayTests {
    @Test func anOlderVoteDatagramChangesNothingEvenAfterARestart() throws {
        var book = VoteBook(trackID: "t")
        let voter = testKey(4)
        #expect(book.apply(voter: voter, trackID: "t", choice: .up, sequence: 100) == .counted)
        #expect(book.apply(voter: voter, trackID: "t", choice: .down, sequence: 200) == .counted)
        // The restart: the book comes back from the saved station.
        var restored = try JSONDecoder().decode(VoteBook.self, from: JSONEncoder().encode(book))
        // A captured datagram from before (sequence 100, "up") is replayed: the vote stays down.
        #expect(restored.apply(voter: voter, trackID: "t", choice: .up, sequence: 100) == .superseded)
        #expect(restored.choice(of: voter) == .down && restored.tally == Tally(down: 1))
        // A newer vote still counts.
        #expect(restored.apply(voter: voter, trackID: "t", choice: .clear, sequence: 300) == .counted)
        #expect(restored.tally == Tally())
    }
}
