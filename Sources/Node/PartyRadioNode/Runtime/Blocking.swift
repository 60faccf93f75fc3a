import Dispatch

/// The one bridge from synchronous code to async work: runs the work as a task and parks the
/// calling thread until it ends. For threads that are not the concurrency pool's and may wait: the
/// CLI's entry points (catalog transfers before a node starts) and the HTTP server's connection
/// threads (the web page's catalog searches and artwork). Never call it from a task: the pool's
/// threads are few, and one parked on its own task's child may be the one that task needs.
public enum Blocking {
    /// Runs `work` and waits for its result, however long it takes.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        wait(for: work, until: .distantFuture)!
    }

    /// Runs `work` and waits at most `seconds` for it; after that the task is cancelled and the
    /// result is ``TimedOut``.
    public static func run<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) -> Result<
        T, any Error
    > {
        let result = wait(
            for: { () async -> Result<T, any Error> in
                do { return .success(try await work()) } catch { return .failure(error) }
            }, until: .now() + seconds)
        return result ?? .failure(TimedOut())
    }

    /// The work did not end in the time given.
    public struct TimedOut: Error, CustomStringConvertible {
        public var description: String { "no answer in time" }
    }

    private static func wait<T: Sendable>(for work: @escaping @Sendable () async -> T, until deadline: DispatchTime)
        -> T?
    {
        let done = Condition<T?>(nil)
        let task = Task {
            let value = await work()
            done.change { $0 = value }
        }
        guard let value = done.wait(until: deadline, { $0 }) else {
            task.cancel()
            return nil
        }
        return value
    }
}
