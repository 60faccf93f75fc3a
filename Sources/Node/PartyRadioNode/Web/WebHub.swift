import Foundation
import PartyRadioCore
import PartyRadioHTTP

/// Where the DJ's thread and the web server's connection threads meet: the latest page state
/// (published by the DJ's runtime after every change), the server-sent event streams waiting for
/// it, and the answers to guests' actions waiting for the DJ.
///
/// `@unchecked Sendable`: the state, the streams' count and `closed` are guarded by `condition`;
/// the answers and sequences by `answering` (a second lock, so that an answer to one guest does
/// not wake every event stream, and a change does not wake every waiting guest).
final class WebHub: @unchecked Sendable {
    /// A stream sends a comment this often when nothing changes, so that proxies and the
    /// server's idle timeout keep it open.
    static let keepAliveSeconds = 5.0

    private let condition = NSCondition()
    private let answering = NSCondition()
    /// How often a waiting stream looks whether its client hung up.
    static let hangUpCheckSeconds = 0.25
    private var state: [UInt8] = Array("{}".utf8)
    private var version: UInt64 = 0
    private var closed = false
    /// What guests can search and request from the DJ's own queue (updated with the state).
    private var tracks: [Track] = []
    /// The votes on the playing track (each guest sees its own on reload).
    private var votes = VoteBook()
    /// Answers waiting to be taken, by ticket (a ticket is registered before its action goes in).
    private var answers: [UInt64: WebReply?] = [:]
    private var answersClosed = false
    private var nextTicket: UInt64 = 0
    private var lastSequence: UInt64 = 0
    private var streams = 0

    /// The page state changed: every stream sends it.
    func publish(_ json: String, tracks: [Track], votes: VoteBook) {
        condition.lock()
        state = Array(json.utf8)
        self.tracks = tracks
        self.votes = votes
        version &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// The last state published.
    var current: [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return state
    }

    /// How `guest` voted on the playing track.
    func vote(of guest: PublicKey) -> VoteChoice {
        condition.lock()
        defer { condition.unlock() }
        return votes.choice(of: guest)
    }

    var queue: [Track] {
        condition.lock()
        defer { condition.unlock() }
        return tracks
    }

    /// Streams open now (for the benchmark and the doctor).
    var openStreams: Int {
        condition.lock()
        defer { condition.unlock() }
        return streams
    }

    /// Ends every stream and gives up every waiting answer (the DJ is stopping).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        answering.lock()
        answersClosed = true
        answering.broadcast()
        answering.unlock()
    }

    // MARK: Answers

    /// A new ticket with a sequence for the action it goes with: sequences increase across runs
    /// (the real-time clock in nanoseconds, at least one more than the last), as nodes' do.
    func ticket(realTimeNs: Int64) -> (ticket: UInt64, sequence: UInt64) {
        answering.lock()
        defer { answering.unlock() }
        nextTicket += 1
        answers[nextTicket] = .some(nil)
        lastSequence = max(lastSequence + 1, UInt64(max(0, realTimeNs)))
        return (nextTicket, lastSequence)
    }

    /// A sequence for an action nobody waits on (a listening page's heartbeat).
    func sequence(realTimeNs: Int64) -> UInt64 {
        answering.lock()
        defer { answering.unlock() }
        lastSequence = max(lastSequence + 1, UInt64(max(0, realTimeNs)))
        return lastSequence
    }

    /// The DJ answered a ticket.
    func answer(_ ticket: UInt64, _ reply: WebReply) {
        answering.lock()
        if answers[ticket] != nil {
            answers[ticket] = .some(reply)
            answering.broadcast()
        }
        answering.unlock()
    }

    /// Waits for the answer to `ticket`; nil after `timeout` seconds or when the DJ stops.
    func wait(for ticket: UInt64, timeout: Double) -> WebReply? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        answering.lock()
        defer {
            answers[ticket] = nil
            answering.unlock()
        }
        while !answersClosed {
            if case .some(.some(let reply)) = answers[ticket] { return reply }
            if !answering.wait(until: deadline) { return nil }
        }
        return nil
    }

    // MARK: Streams

    /// A server-sent event stream: the whole state at once, then at every change.
    func stream() -> any WebStream { EventStream(hub: self) }

    final class EventStream: WebStream, @unchecked Sendable {  // used by one connection thread
        private let hub: WebHub
        private var sent: UInt64 = .max
        private var counted = false

        init(hub: WebHub) { self.hub = hub }

        deinit {
            guard counted else { return }
            hub.condition.lock()
            hub.streams -= 1
            hub.condition.unlock()
        }

        func next(clientGone: () -> Bool) -> [UInt8]? {
            hub.condition.lock()
            defer { hub.condition.unlock() }
            if !counted {
                counted = true
                hub.streams += 1
                // Tells EventSource to come back after 1 s (not its default 3 s) after a drop.
                sent = hub.version
                return Array("retry: 1000\nevent: state\ndata: ".utf8) + hub.state + Array("\n\n".utf8)
            }
            let deadline = Date(timeIntervalSinceNow: WebHub.keepAliveSeconds)
            while !hub.closed && hub.version == sent {
                // Waits in slices, so that a client that hung up frees its slot within a quarter second.
                let slice = min(deadline, Date(timeIntervalSinceNow: WebHub.hangUpCheckSeconds))
                if !hub.condition.wait(until: slice) {
                    if clientGone() { return nil }
                    // A named event, not a comment: the page can see it, and knows the stream is alive.
                    if Date() >= deadline { return Array("event: ping\ndata: {}\n\n".utf8) }
                }
            }
            if hub.closed { return nil }
            sent = hub.version
            return Array("event: state\ndata: ".utf8) + hub.state + Array("\n\n".utf8)
        }
    }
}
