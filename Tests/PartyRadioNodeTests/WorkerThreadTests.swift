import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioNode

/// The node's periodic work (unicast DNS-SD): the node's loop keeps the time (``Periodic``), a
/// worker thread runs the blocking part, one job at a time, and a turn that comes round while the
/// last one still runs is skipped.
@Suite struct WorkerThreadTests {
    @Test func aPeriodFiresOncePerTurnAndSkipsWhatTheLoopMissed() {
        let second = Nanos.perSecond
        var periodic = Periodic(every: second, from: LocalTime(ns: 0))
        let early = periodic.fire(at: LocalTime(ns: second - 1))
        let due = periodic.fire(at: LocalTime(ns: second))
        let again = periodic.fire(at: LocalTime(ns: second))
        #expect(!early && due && !again, "once per turn, not before")
        #expect(periodic.next == LocalTime(ns: 2 * second))
        let late = periodic.fire(at: LocalTime(ns: 2 * second + 100))
        #expect(late && periodic.next == LocalTime(ns: 3 * second), "a turn a little late keeps the beat")
        let missed = periodic.fire(at: LocalTime(ns: 7 * second + 5))
        #expect(missed && periodic.next == LocalTime(ns: 8 * second + 5), "turns the loop missed are not made up")
    }

    @Test func aJobRunsOffTheCallersThreadAndATurnWhileBusyIsSkipped() async {
        let worker = WorkerThread(name: "test.worker")
        let gate = Condition((open: false, started: 0, ran: 0))
        let job: @Sendable () -> Void = {
            gate.change { $0.started += 1 }
            _ = gate.wait(until: .now() + 60) { $0.open ? true : nil }
            gate.change { $0.ran += 1 }
        }
        // The job waits for the gate, which only this caller opens: offer returns before it runs.
        #expect(worker.offer(job))
        #expect(gate.withLock { $0.ran } == 0)
        _ = await onAThread { gate.wait(until: .now() + 60) { $0.started == 1 ? true : nil } }
        #expect(!worker.offer(job), "busy with the last one")
        gate.change { $0.open = true }
        _ = await onAThread { gate.wait(until: .now() + 60) { $0.ran == 1 ? true : nil } }
        // The worker marks itself free right after the job returns; on a loaded machine its thread may
        // wait a while for a core, so the offer is tried for up to 30 s.
        var accepted = false
        let deadline = ContinuousClock.now + .seconds(30)
        while !accepted && ContinuousClock.now < deadline {
            accepted = worker.offer(job)
            if !accepted { try? await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(accepted)
        let ran = await onAThread { gate.wait(until: .now() + 60) { $0.ran == 2 ? $0.ran : nil } }
        #expect(ran == 2)
        worker.stop(waiting: true)
        #expect(!worker.offer(job), "a stopped worker takes nothing")
    }

    @Test func stoppingWaitsForTheJobUnderWay() async {
        let worker = WorkerThread(name: "test.worker")
        let done = Condition(false)
        worker.offer {
            Thread.sleep(forTimeInterval: 0.2)
            done.change { $0 = true }
        }
        try? await Task.sleep(for: .milliseconds(20))
        await onAThread { worker.stop(waiting: true) }
        #expect(done.withLock { $0 }, "the job under way finished before stop returned")
    }

    /// The DJ's rescans: a request while a scan runs is not dropped (files added during the scan
    /// would be missed) but runs once the scan is done, and many such requests make one more run.
    @Test func enqueuedJobsWaitForTheOneUnderWayAndCollapseIntoOne() async {
        let worker = WorkerThread(name: "test.worker")
        let gate = Condition((open: false, started: 0, ran: [Int]()))
        let job: @Sendable (Int) -> @Sendable () -> Void = { number in
            {
                gate.change { $0.started += 1 }
                _ = gate.wait(until: .now() + 60) { $0.open ? true : nil }
                gate.change { $0.ran.append(number) }
            }
        }
        #expect(worker.enqueue(job(1)))
        _ = await onAThread { gate.wait(until: .now() + 60) { $0.started == 1 ? true : nil } }
        // Busy: these wait, and the last one stands for them all.
        #expect(worker.enqueue(job(2)))
        #expect(worker.enqueue(job(3)))
        gate.change { $0.open = true }
        let ran = await onAThread { gate.wait(until: .now() + 10) { $0.ran.count == 2 ? $0.ran : nil } }
        #expect(ran == [1, 3])
        try? await Task.sleep(for: .milliseconds(100))
        #expect(gate.withLock { $0.ran } == [1, 3], "job 2 was replaced, not run")
        worker.stop(waiting: true)
        #expect(!worker.enqueue(job(4)), "a stopped worker takes nothing")
    }
}
