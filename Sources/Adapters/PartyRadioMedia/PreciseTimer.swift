import Dispatch
import Foundation
import Glibc
import PartyRadioCore
import Synchronization

/// Runs an action at a precise instant of a `NanoClock`, on one long-lived thread of its own: the
/// thread sleeps until a millisecond before the instant, then spins, so the action starts within
/// microseconds of it instead of within the scheduler's timer slack.
///
/// Ownership: the timer owns exactly one thread, started by `init` and ended by `shutdown()` (or
/// deinit), which waits for it to finish. That thread runs the armed actions, one at a time, and
/// nothing else. `arm` and `cancel`, from any thread, only change the armed slot and wake it. At
/// most one action is armed; arming again replaces it.
final class PreciseTimer: Sendable {
    /// How long before the instant the thread stops sleeping and starts spinning.
    static let spinNs: Int64 = Nanos.ms(1)

    private let shared: Shared
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the timer's thread, idle until armed.
    /// - Parameter name: the thread's name, as `ps -L` and /proc show it (at most 15 bytes).
    init(name: String, clock: any NanoClock) {
        shared = Shared(clock: clock)
        // The thread holds the shared part only, never the timer, so dropping the timer ends it.
        let thread = Thread { [shared, finished] in
            nameCurrentThread(name)
            shared.run()
            finished.signal()
        }
        thread.start()
    }

    deinit { shutdown() }

    /// Runs `action` on the timer's thread at local instant `instant` (at once if it has passed),
    /// replacing whatever was armed.
    func arm(at instant: Int64, _ action: @escaping @Sendable () -> Void) {
        shared.state.withLock {
            guard !$0.stopped else { return }
            $0.serial += 1
            $0.armed = Armed(instant: instant, serial: $0.serial, action: action)
        }
        shared.wake.signal()
    }

    /// Disarms. An action already running runs to its end; one that is still waiting never runs.
    func cancel() {
        shared.state.withLock { $0.armed = nil }
        shared.wake.signal()
    }

    /// Disarms and ends the thread, waiting for an action in progress (unless called from that
    /// action). Idempotent; `arm` does nothing afterwards.
    func shutdown() {
        let first = shared.state.withLock { state -> Bool in
            defer {
                state.stopped = true
                state.armed = nil
            }
            return !state.stopped
        }
        guard first else { return }
        shared.wake.signal()
        if !shared.isTimerThread { finished.wait() }
    }
}

/// Names the calling thread as `ps -L` and /proc show it (Linux keeps 15 bytes). Not `Thread.name`:
/// set before `start()` it never reached the kernel here, and set from the new thread only sometimes.
/// (Unnamed threads show the process's name, which hides them among the node's own in per-thread
/// figures: scripts/bench-speaker.py `THREADS=1`.)
func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

private struct Armed {
    var instant: Int64
    var serial: Int
    var action: @Sendable () -> Void
}

/// What the timer's thread and its callers share.
private final class Shared: Sendable {
    struct State {
        var armed: Armed?
        var serial = 0
        var stopped = false
        var thread: pthread_t?
    }

    let clock: any NanoClock
    let state = Mutex(State())
    /// Signalled on every change of `state`: the thread re-reads it.
    let wake = DispatchSemaphore(value: 0)

    init(clock: any NanoClock) { self.clock = clock }

    var isTimerThread: Bool {
        state.withLock { $0.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// The thread's body: runs armed actions at their instants until stopped.
    func run() {
        state.withLock { $0.thread = pthread_self() }
        while let action = nextAction() { action() }
    }

    /// Waits for the armed instant and returns the action to run then; nil once stopped.
    private func nextAction() -> (@Sendable () -> Void)? {
        while true {
            let (armed, stopped) = state.withLock { ($0.armed, $0.stopped) }
            if stopped { return nil }
            guard let armed else {
                wake.wait()
                continue
            }
            let sleepNs = armed.instant - PreciseTimer.spinNs - clock.now()
            if sleepNs > 0 {
                // Woken early by a change, or on time: look again either way.
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(sleepNs)))
                continue
            }
            while clock.now() < armed.instant {}
            let due: (@Sendable () -> Void)? = state.withLock {
                guard !$0.stopped, $0.armed?.serial == armed.serial else { return nil }
                $0.armed = nil
                return armed.action
            }
            if let due { return due }
        }
    }
}
