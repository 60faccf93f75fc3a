import Dispatch
import Synchronization

/// Runs async work from the CLI's synchronous entry points (the nodes run their own loops on
/// the calling thread; catalog transfers are async tasks) and waits for its result.
enum Blocking {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}
