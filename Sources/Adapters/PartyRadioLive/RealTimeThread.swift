import Foundation
import Glibc

/// Real-time scheduling for an audio thread, as audio clients ask for it (PulseAudio's own threads
/// get it through rtkit, JACK's through the `audio` group's `rtprio` limit): under a loaded machine
/// a normal thread can wait tens of milliseconds for a core after its sleep, longer than a live
/// output's few milliseconds of buffer, and the output runs dry. A thread at `SCHED_RR` is run as
/// soon as it wakes. Allowed for root, or where `ulimit -r` (RLIMIT_RTPRIO) allows the priority (the
/// `audio` group's limit on many systems); elsewhere the thread stays as it was.
public enum RealTimeThread {
    /// The priority asked for: low among real-time threads (PulseAudio's own run at 5 through rtkit,
    /// JACK's at 10 and more), above every normal thread.
    public static let priority: Int32 = 5

    /// Puts the calling thread at `SCHED_RR` `priority`. Returns whether it took (false: not
    /// allowed here; nothing changed).
    @discardableResult
    public static func enterForCallingThread(priority: Int32 = priority) -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return pthread_setschedparam(pthread_self(), SCHED_RR, &parameters) == 0
    }
}
