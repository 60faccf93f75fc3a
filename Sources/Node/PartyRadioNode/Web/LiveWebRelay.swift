import Dispatch
import PartyRadioCore
import PartyRadioHTTP
import Synchronization

/// A live DJ's frames for the pages that listen (`GET /api/live`, docs/WEB.md): the DJ's thread
/// publishes each frame once into ``LiveWebRelayState``'s ring; every stream waits on it from its
/// connection's thread and sends what it has not sent yet. A stream a whole ring behind ends.
final class LiveWebRelay: Sendable {
    /// A silent station still sends a keep-alive this often.
    static let keepAliveSeconds = 5.0

    private struct State: Sendable {
        var relay: LiveWebRelayState
        var closed = false
    }

    private let state: Condition<State>
    /// The station's delay, told to each page first.
    let delayMs: Int

    init(limits: LiveWebRelayState.Limits = LiveWebRelayState.Limits(), delayMs: Int) {
        state = Condition(State(relay: LiveWebRelayState(limits: limits)))
        self.delayMs = delayMs
    }

    /// A frame the DJ sent to its group (the DJ's thread).
    func publish(_ frame: LiveFrame) {
        let record = LiveWebRecord.frame(frame)
        state.change { $0.relay.publish(record) }
    }

    /// Ends every stream (the DJ is stopping).
    func close() { state.change { $0.closed = true } }

    /// Streams open now, and readers dropped for falling behind.
    var counts: (open: Int, dropped: Int) { state.withLock { ($0.relay.openStreams, $0.relay.dropped) } }

    /// A stream for a page on `machine`, or why not.
    func stream(machine: String) -> Result<any WebStream, LiveRefusal> {
        let admission = state.withLock { $0.relay.admit(machine: machine) }
        switch admission {
        case .admitted(let cursor): return .success(Stream(relay: self, machine: machine, cursor: cursor))
        case .full: return .failure(.full)
        case .machineFull: return .failure(.machineFull)
        }
    }

    enum LiveRefusal: Error {
        case full, machineFull
    }

    private enum Next: Sendable {
        case bytes([UInt8], next: UInt64)
        case end
    }

    final class Stream: WebStream {
        private let relay: LiveWebRelay
        private let machine: String
        /// The next record to send, nil before the first answer (one connection thread uses a
        /// stream: the lock is never contended).
        private let cursor: Mutex<UInt64?>
        private let start: UInt64

        init(relay: LiveWebRelay, machine: String, cursor: UInt64) {
            self.relay = relay
            self.machine = machine
            self.start = cursor
            self.cursor = Mutex(nil)
        }

        deinit {
            let machine = machine
            relay.state.withLock { $0.relay.release(machine: machine) }
        }

        func next(clientGone: () -> Bool) -> [UInt8]? {
            guard let from = cursor.withLock({ $0 }) else {
                cursor.withLock { $0 = start }
                return LiveWebRecord.station(delayMs: relay.delayMs)
            }
            let deadline = DispatchTime.now() + LiveWebRelay.keepAliveSeconds
            while true {
                let slice = min(deadline, .now() + WebHub.hangUpCheckSeconds)
                let next: Next? = relay.state.wait(until: slice) { state in
                    if state.closed { return .end }
                    switch state.relay.read(from: from) {
                    case .nothing: return nil
                    case .records(let bytes, let next): return .bytes(bytes, next: next)
                    case .behind:
                        state.relay.countDropped()
                        return .end
                    }
                }
                switch next {
                case .end?:
                    return nil
                case .bytes(let bytes, let next)?:
                    cursor.withLock { $0 = next }
                    return bytes
                case nil:
                    if clientGone() { return nil }
                    if DispatchTime.now() >= deadline { return LiveWebRecord.keepAlive }
                }
            }
        }
    }
}
