import Foundation
import PartyRadioCore

/// A thread that runs blocking work for a node, one job at a time, so that the node's thread never
/// waits on it: the unicast DNS-SD client's queries and updates, which take seconds when the server
/// does not answer, and the DJ's library rescans. The node's loop says when (its wake-ups are the node's one timer system,
/// ``Periodic``); the worker only runs what it is handed.
final class WorkerThread: Sendable {
    private struct Work {
        var job: (@Sendable () -> Void)?
        var busy = false
        var stopping = false
    }

    private let work = Condition(Work())
    private let ended = Condition(false)

    init(name: String) {
        let thread = Thread { [work, ended] in
            while let job = work.wait({ work -> (@Sendable () -> Void)?? in
                if work.stopping { return .some(nil) }
                guard let job = work.job else { return nil }
                work.job = nil
                work.busy = true
                return job
            }) ?? nil {
                job()
                work.withLock { $0.busy = false }
            }
            ended.change { $0 = true }
        }
        thread.name = name
        thread.start()
    }

    /// The thread holds the conditions, not the worker: a worker let go of ends its thread.
    deinit { work.change { $0.stopping = true } }

    /// Hands `job` to the thread, unless it is still busy with the last one: then `job` is
    /// dropped and this returns false (a timer that comes round while its last run still runs
    /// skips a turn, as a GCD timer's do).
    @discardableResult
    func offer(_ job: @escaping @Sendable () -> Void) -> Bool {
        work.change { work in
            guard !work.busy && work.job == nil && !work.stopping else { return false }
            work.job = job
            return true
        }
    }

    /// Hands `job` to the thread to run after the one it runs now, if any; a job still waiting for
    /// its turn is replaced by `job` (a request that came again while the last one waited, as a
    /// second SIGHUP during a library scan: one more scan covers both). False once stopped.
    @discardableResult
    func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        work.change { work in
            guard !work.stopping else { return false }
            work.job = job
            return true
        }
    }

    /// Ends the thread once the job it runs now, if any, is done; `waiting`: waits for that.
    func stop(waiting: Bool) {
        work.change { work in
            work.stopping = true
            work.job = nil
        }
        if waiting { _ = ended.wait { $0 ? true : nil } }
    }
}

/// Work a node does every `periodNs` besides what its machine asks for (the DJ's renewal in a
/// unicast DNS-SD domain, a guest's sweeps of it): the node's loop sleeps no longer than
/// ``next`` and then fires it. A turn missed (the loop was late) is not made up.
struct Periodic {
    let periodNs: Int64
    private(set) var next: LocalTime

    init(every periodNs: Int64, from start: LocalTime) {
        self.periodNs = periodNs
        next = start + periodNs
    }

    /// Whether it is due at `now`; if so the next turn is one period on (or one period from
    /// `now`, when the loop fell behind by a whole period or more).
    mutating func fire(at now: LocalTime) -> Bool {
        guard now >= next else { return false }
        next += periodNs
        if next <= now { next = now + periodNs }
        return true
    }
}
