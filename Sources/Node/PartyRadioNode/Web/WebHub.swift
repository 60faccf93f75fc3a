import Dispatch
import PartyRadioCore
import PartyRadioHTTP
import Synchronization

/// Where the DJ's thread and the web server's connection threads meet: the latest page state
/// (published by the DJ's runtime after every change), the server-sent event streams waiting for
/// it, and the answers to guests' actions waiting for the DJ.
///
/// Two conditions: the page (state, streams, `closed`) and the answers, so that an answer to one
/// guest does not wake every event stream, and a change does not wake every waiting guest.
final class WebHub: Sendable {
    /// A stream sends a comment this often when nothing changes, so that proxies and the
    /// server's idle timeout keep it open.
    static let keepAliveSeconds = 5.0
    /// How often a waiting stream looks whether its client hung up.
    static let hangUpCheckSeconds = 0.25

    private struct Page {
        var state: [UInt8] = Array("{}".utf8)
        var version: UInt64 = 0
        var closed = false
        /// The votes on the playing track (each guest sees its own on reload).
        var votes = VoteBook()
        var streams = 0
    }

    private struct Answers {
        /// Answers waiting to be taken, by ticket (a ticket is registered before its action goes in).
        var answers: [UInt64: WebReply?] = [:]
        var closed = false
        var nextTicket: UInt64 = 0
        var lastSequence: UInt64 = 0
    }

    private let page = Condition(Page())
    private let answers = Condition(Answers())

    /// The page state changed: every stream sends it.
    func publish(_ json: String, votes: VoteBook) {
        page.change { page in
            page.state = Array(json.utf8)
            page.votes = votes
            page.version &+= 1
        }
    }

    /// The last state published.
    var current: [UInt8] { page.withLock { $0.state } }

    /// The DJ's speakers as `GET /api/speakers` gives them (the DJ's only: not in the page state).
    private let speakerList = Mutex<[UInt8]>(Array(#"{"speakers":[]}"#.utf8))

    /// The speakers changed (one came, went, or reported other settings).
    func publish(speakers: [SpeakerBook.Entry]) {
        let json = JSON.object([("speakers", .array(speakers.map(\.json)))]).shown.rendered
        speakerList.withLock { $0 = Array(json.utf8) }
    }

    var speakers: [UInt8] { speakerList.withLock { $0 } }

    /// How `guest` voted on the playing track.
    func vote(of guest: PublicKey) -> VoteChoice { page.withLock { $0.votes.choice(of: guest) } }

    /// Streams open now (for the benchmark and the doctor).
    var openStreams: Int { page.withLock { $0.streams } }

    /// Ends every stream and gives up every waiting answer (the DJ is stopping).
    func close() {
        page.change { $0.closed = true }
        answers.change { $0.closed = true }
    }

    // MARK: Answers

    /// A new ticket with a sequence for the action it goes with: sequences increase across runs
    /// (the real-time clock in nanoseconds, at least one more than the last), as nodes' do.
    func ticket(realTimeNs: Int64) -> (ticket: UInt64, sequence: UInt64) {
        answers.withLock { book in
            book.nextTicket += 1
            book.answers[book.nextTicket] = .some(nil)
            book.lastSequence = max(book.lastSequence + 1, UInt64(max(0, realTimeNs)))
            return (book.nextTicket, book.lastSequence)
        }
    }

    /// A sequence for an action nobody waits on (a listening page's heartbeat).
    func sequence(realTimeNs: Int64) -> UInt64 {
        answers.withLock { book in
            book.lastSequence = max(book.lastSequence + 1, UInt64(max(0, realTimeNs)))
            return book.lastSequence
        }
    }

    /// The DJ answered a ticket.
    func answer(_ ticket: UInt64, _ reply: WebReply) {
        // Only a ticket still waited for wakes the waiting guests.
        let waited = answers.withLock { $0.answers[ticket] != nil }
        guard waited else { return }
        answers.change { book in
            if book.answers[ticket] != nil { book.answers[ticket] = .some(reply) }
        }
    }

    /// Waits for the answer to `ticket`; nil after `timeout` seconds or when the DJ stops.
    func wait(for ticket: UInt64, timeout: Double) -> WebReply? {
        let answer: WebReply?? = answers.wait(until: .now() + timeout) { book in
            if book.closed { return .some(nil) }
            guard case .some(.some(let reply)) = book.answers[ticket] else { return nil }
            return .some(reply)
        }
        answers.withLock { $0.answers[ticket] = nil }
        return answer ?? nil
    }

    // MARK: Streams

    /// A server-sent event stream: the whole state at once, then at every change.
    /// - Parameter present: called when the stream opens and every ``PresenceBook/pageIntervalNs`` while
    ///   it stays open (the page's machine is present at the station).
    func stream(present: @escaping @Sendable () -> Void = {}) -> any WebStream {
        EventStream(hub: self, present: present)
    }

    final class EventStream: WebStream {
        private let hub: WebHub
        private let present: @Sendable () -> Void
        /// When `present` was last called (one connection thread uses a stream).
        private let toldAt = Mutex<DispatchTime>(.now())
        /// The version sent last; nil before the stream's first state (one connection thread
        /// uses a stream: the lock is never contended).
        private let sent = Mutex<UInt64?>(nil)

        init(hub: WebHub, present: @escaping @Sendable () -> Void) {
            self.hub = hub
            self.present = present
        }

        /// Tells the DJ the page is still open, when it is time to.
        private func stillPresent() {
            let now = DispatchTime.now()
            let due = toldAt.withLock { told in
                guard now.uptimeNanoseconds >= told.uptimeNanoseconds + UInt64(PresenceBook.pageIntervalNs) else {
                    return false
                }
                told = now
                return true
            }
            if due { present() }
        }

        deinit {
            guard sent.withLock({ $0 }) != nil else { return }
            hub.page.withLock { $0.streams -= 1 }
        }

        private enum Next {
            case state([UInt8], version: UInt64)
            case closed
        }

        func next(clientGone: () -> Bool) -> [UInt8]? {
            guard let sent = sent.withLock({ $0 }) else {
                let (state, version) = hub.page.withLock { page in
                    page.streams += 1
                    return (page.state, page.version)
                }
                self.sent.withLock { $0 = version }
                present()
                // Tells EventSource to come back after 1 s (not its default 3 s) after a drop.
                return Array("retry: 1000\nevent: state\ndata: ".utf8) + state + Array("\n\n".utf8)
            }
            let deadline = DispatchTime.now() + WebHub.keepAliveSeconds
            while true {
                // Waits in slices, so that a client that hung up frees its slot within a quarter second.
                let slice = min(deadline, .now() + WebHub.hangUpCheckSeconds)
                let next: Next? = hub.page.wait(until: slice) { page in
                    if page.closed { return .closed }
                    return page.version == sent ? nil : .state(page.state, version: page.version)
                }
                switch next {
                case .closed?:
                    return nil
                case .state(let state, let version)?:
                    self.sent.withLock { $0 = version }
                    return Array("event: state\ndata: ".utf8) + state + Array("\n\n".utf8)
                case nil:
                    if clientGone() { return nil }
                    stillPresent()
                    // A named event, not a comment: the page can see it, and knows the stream is alive.
                    if DispatchTime.now() >= deadline { return Array("event: ping\ndata: {}\n\n".utf8) }
                }
            }
        }
    }
}
