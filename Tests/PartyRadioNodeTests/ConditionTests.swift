import Dispatch
import Foundation
import Testing

@testable import PartyRadioNode

/// Runs `body` on a thread of its own (as the CLI's and the HTTP server's threads are), never on
/// the concurrency pool, and hands back what it returned.
func onAThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
}

/// Seconds since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The house's condition (a Mutex and a semaphore per waiter) and the one sync-over-async bridge
/// built on it: a waiter wakes on the change that makes it ready, not on others, and not before;
/// a deadline ends a wait that nothing ends.
@Suite struct ConditionTests {
    @Test(.timeLimit(.minutes(1))) func aWaiterWakesOnTheChangeThatMakesItReady() async {
        let condition = Condition(0)
        // A wait that ran into its deadline would hand back nil, not 2.
        async let woken = onAThread { condition.wait(until: .now() + 600) { $0 >= 2 ? $0 : nil } }
        try? await Task.sleep(for: .milliseconds(50))
        condition.change { $0 = 1 }  // not ready: the waiter looks and waits on
        try? await Task.sleep(for: .milliseconds(50))
        condition.change { $0 = 2 }
        #expect(await woken == 2)
    }

    @Test func aChangeBeforeTheWaitIsSeen() async {
        let condition = Condition(0)
        condition.change { $0 = 7 }
        let seen = await onAThread { condition.wait(until: .now() + 10) { $0 == 7 ? $0 : nil } }
        #expect(seen == 7)
    }

    @Test func manyWaitersAllWake() async {
        let condition = Condition(false)
        let woken = await withTaskGroup(of: Bool?.self) { group in
            for _ in 0..<8 {
                group.addTask { await onAThread { condition.wait(until: .now() + 10) { $0 ? true : nil } } }
            }
            try? await Task.sleep(for: .milliseconds(50))
            condition.change { $0 = true }
            return await group.reduce(0) { $0 + ($1 == true ? 1 : 0) }
        }
        #expect(woken == 8)
    }

    @Test(.timeLimit(.minutes(1))) func aDeadlineEndsAWaitNothingEnds() async {
        let condition = Condition(0)
        let start = ContinuousClock.now
        let result = await onAThread { condition.wait(until: .now() + 0.2) { $0 > 0 ? $0 : nil } }
        let waited = seconds(since: start)
        #expect(result == nil)
        #expect(waited >= 0.2, "\(waited) s: not before its deadline")
    }

    @Test(.timeLimit(.minutes(1))) func theBridgeHandsBackTheTasksResult() async {
        let value = await onAThread {
            Blocking.run { () async -> Int in
                try? await Task.sleep(for: .milliseconds(20))
                return 42
            }
        }
        #expect(value == 42)
        let thrown = await onAThread {
            Blocking.run(seconds: 5) { () async throws -> Int in throw Blocking.TimedOut() }
        }
        #expect(throws: Blocking.TimedOut.self) { try thrown.get() }
    }

    @Test func theBridgeGivesUpAtItsDeadlineAndCancelsTheTask() async {
        let cancelled = Condition(false)
        let result = await onAThread {
            Blocking.run(seconds: 0.2) { () async throws -> Int in
                try? await Task.sleep(for: .seconds(30))
                cancelled.change { $0 = Task.isCancelled }
                return 1
            }
        }
        // A bridge that waited the task out would hand back its 1 (after 30 s), not TimedOut.
        guard case .failure(let error) = result else {
            Issue.record("an answer after the deadline: \(result)")
            return
        }
        #expect(error is Blocking.TimedOut)
        let sawCancel = await onAThread { cancelled.wait(until: .now() + 5) { $0 ? true : nil } }
        #expect(sawCancel == true, "the abandoned task was cancelled")
    }
}
