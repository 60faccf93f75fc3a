import Dispatch
import Synchronization

/// State behind a `Mutex` that threads can wait on until it changes: a condition variable for the
/// house's one lock family. `Mutex` has none, so each waiter parks on a semaphore of its own, which
/// ``change(_:)`` signals after the change; the waiter then looks at the state again, under the lock.
///
/// Used where threads wait for the node (the web page's event streams and guests' answers,
/// ``WebHub``), for a task (``Blocking``) or for work (``WorkerThread``).
final class Condition<State: Sendable>: Sendable {
    private struct Guarded {
        var state: State
        var waiters: [UInt64: DispatchSemaphore] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let guarded: Mutex<Guarded>

    init(_ state: State) { guarded = Mutex(Guarded(state: state)) }

    /// Reads or changes the state without waking anybody.
    func withLock<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        guarded.withLock { body(&$0.state) }
    }

    /// Changes the state and wakes every waiter, which looks at it again.
    @discardableResult
    func change<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        let (result, woken) = guarded.withLock { guarded in
            let result = body(&guarded.state)
            defer { guarded.waiters.removeAll() }
            return (result, Array(guarded.waiters.values))
        }
        for waiter in woken { waiter.signal() }
        return result
    }

    /// Waits until `ready` makes a value of the state (it is asked under the lock, at once and
    /// after every change) or `deadline` passes: nil then, unless `ready` makes one at that last look.
    func wait<Result: Sendable>(until deadline: DispatchTime = .distantFuture, _ ready: (inout State) -> Result?)
        -> Result?
    {
        let semaphore = DispatchSemaphore(value: 0)
        while true {
            let looked: (Result?, UInt64) = guarded.withLock { guarded in
                if let result = ready(&guarded.state) { return (result, 0) }
                guarded.nextWaiter += 1
                guarded.waiters[guarded.nextWaiter] = semaphore
                return (nil, guarded.nextWaiter)
            }
            if let result = looked.0 { return result }
            if semaphore.wait(timeout: deadline) == .timedOut {
                // A change may have signalled it since; the semaphore is dropped with its count.
                return guarded.withLock { guarded in
                    guarded.waiters[looked.1] = nil
                    return ready(&guarded.state)
                }
            }
        }
    }
}
