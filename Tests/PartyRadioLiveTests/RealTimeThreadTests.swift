import Foundation
import Glibc
import PartyRadioLive
import Synchronization
import Testing

/// The live output's thread asks for real-time scheduling (docs/LIVE.md, "Real-time priority"): the
/// kernel's rule, restated: a process with CAP_SYS_NICE may (root, unless a container took the
/// capability away), anyone else up to RLIMIT_RTPRIO. When it says it took, the thread is at
/// SCHED_RR and the priority asked; when it says not, the thread is as it was.
@Suite struct RealTimeThreadTests {
    /// CAP_SYS_NICE (bit 23) in this process's effective capabilities.
    static func hasSysNice() -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let bits = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return bits & (1 << 23) != 0
    }

    @Test func aThreadGetsSchedRRWhereTheKernelAllowsIt() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit)
        let allowed = Self.hasSysNice() || limit.rlim_cur >= rlim_t(RealTimeThread.priority)
        let seen = Mutex<(took: Bool, policy: Int32, priority: Int32)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var policy: Int32 = 0
            var before = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &before)
            let took = RealTimeThread.enterForCallingThread()
            var after = sched_param()
            var now: Int32 = 0
            pthread_getschedparam(pthread_self(), &now, &after)
            seen.withLock { $0 = (took, took ? now : (now == policy ? -1 : now), after.sched_priority) }
            done.signal()
        }
        thread.start()
        done.wait()
        let result = try #require(seen.withLock { $0 })
        #expect(result.took == allowed, "allowed here: \(allowed)")
        if result.took {
            #expect(result.policy == SCHED_RR && result.priority == RealTimeThread.priority)
        } else {
            #expect(result.policy == -1, "refused, yet the policy changed")
        }
    }
}

extension RealTimeThread {
    /// Runs `body` on the calling thread at the audio thread's real-time priority and puts the
    /// thread back as it was after: a test that plays the sender or the writer beside a real output
    /// is then as punctual as the audio thread it drives. Under CI's load a normal thread waits
    /// tens of milliseconds for a core, and the test itself would starve the output it measures.
    static func whileRealTime<Result>(_ body: () throws -> Result) rethrows -> Result {
        var policy: Int32 = 0
        var before = sched_param()
        pthread_getschedparam(pthread_self(), &policy, &before)
        enterForCallingThread()
        defer { pthread_setschedparam(pthread_self(), policy, &before) }
        return try body()
    }
}
