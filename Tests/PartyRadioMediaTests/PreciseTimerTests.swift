import Dispatch
import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioMedia

/// The start timer on its own: no player, a real clock.
@Suite("PreciseTimer")
struct PreciseTimerTests {
    let clock = RealtimeClock()

    /// A thread name no other test uses, so that counting threads by name sees only this timer's.
    func uniqueName() -> String { "prt-\(UInt32.random(in: 0...UInt32.max))" }

    /// Whether the threads named `name` number `count` within a second: a thread that has finished
    /// its work still takes a moment to leave /proc.
    func threads(named name: String, become count: Int) -> Bool {
        let deadline = clock.now() + Nanos.seconds(1)
        while ProcessThreads.count(named: name) != count {
            if clock.now() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    @Test("runs the armed action at its instant")
    func onTime() throws {
        let timer = PreciseTimer(name: uniqueName(), clock: clock)
        defer { timer.shutdown() }
        var lateness: [Int64] = []
        for _ in 0..<5 {
            let fired = DispatchSemaphore(value: 0)
            let ranAt = Locked<Int64>(0)
            let instant = clock.now() + Nanos.ms(30)
            timer.arm(at: instant) { [clock] in
                ranAt.update { $0 = clock.now() }
                fired.signal()
            }
            #expect(fired.wait(timeout: .now() + .seconds(2)) == .success)
            lateness.append(ranAt.value - instant)
        }
        print("precise timer: lateness (µs) \(lateness.map { $0 / 1000 })")
        // Behaviour, not a benchmark (the libmpv tests share the two cores): never early, roughly on time.
        #expect(lateness.allSatisfy { $0 >= 0 && $0 < Nanos.ms(50) }, "\(lateness)")
    }

    @Test("arming again replaces the armed action; cancelling disarms it")
    func replaceAndCancel() throws {
        let timer = PreciseTimer(name: uniqueName(), clock: clock)
        defer { timer.shutdown() }
        let ran = Locked<[String]>([])
        let now = clock.now()
        timer.arm(at: now + Nanos.ms(40)) { ran.update { $0.append("first") } }
        timer.arm(at: now + Nanos.ms(60)) { ran.update { $0.append("second") } }
        usleep(150_000)
        #expect(ran.value == ["second"])

        timer.arm(at: clock.now() + Nanos.ms(30)) { ran.update { $0.append("cancelled") } }
        timer.cancel()
        usleep(100_000)
        #expect(ran.value == ["second"])

        timer.arm(at: clock.now() - Nanos.ms(5)) { ran.update { $0.append("past") } }
        usleep(50_000)
        #expect(ran.value == ["second", "past"], "an instant already gone runs at once")
    }

    @Test("one thread for any number of actions, ended by shutdown or by dropping the timer")
    func oneThread() throws {
        let name = uniqueName()
        let timer = PreciseTimer(name: name, clock: clock)
        let count = Locked(0)
        for _ in 0..<30 {
            let fired = DispatchSemaphore(value: 0)
            timer.arm(at: clock.now() + Nanos.ms(2)) {
                count.update { $0 += 1 }
                fired.signal()
            }
            #expect(fired.wait(timeout: .now() + .seconds(2)) == .success)
            #expect(ProcessThreads.count(named: name) == 1)
        }
        #expect(count.value == 30)
        timer.shutdown()
        #expect(threads(named: name, become: 0), "shutdown ends the thread")
        timer.arm(at: clock.now()) { count.update { $0 += 1 } }
        usleep(20_000)
        #expect(count.value == 30, "a shut down timer runs nothing")

        let dropped = uniqueName()
        do {
            let scoped = PreciseTimer(name: dropped, clock: clock)
            scoped.arm(at: clock.now() + Nanos.seconds(10)) {}
            usleep(20_000)
            #expect(ProcessThreads.count(named: dropped) == 1)
        }
        #expect(threads(named: dropped, become: 0), "deinit ends the thread")
    }

    @Test("an action may shut its own timer down")
    func shutdownFromAction() throws {
        let name = uniqueName()
        let timer = PreciseTimer(name: name, clock: clock)
        let done = DispatchSemaphore(value: 0)
        timer.arm(at: clock.now()) {
            timer.shutdown()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(2)) == .success)
        #expect(threads(named: name, become: 0))
    }
}
