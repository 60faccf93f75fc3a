import Foundation

/// Runs `body` on a thread of its own and hands back what it returned, leaving the concurrency
/// pool's threads free meanwhile. The pool has one thread per core (two on CI): a simulation that
/// ran its seeds on them for most of a minute held both, and every async test in the same
/// `swift test` process (a `Blocking.run`'s task, a waiter's continuation) stalled behind it.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = "simulation"
        thread.stackSize = 8 << 20
        thread.start()
    }
}
