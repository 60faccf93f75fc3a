import Foundation
import Glibc
import Synchronization

@testable import PartyRadioMedia

/// A fresh temporary directory, removed by `cleanup()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/partyradio-media-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
}

/// Polls until `condition` holds or `seconds` pass; whether it held.
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let clock = RealtimeClock()
    let deadline = clock.now() + Int64(seconds * 1e9)
    while clock.now() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// This process's threads, from /proc/self/task.
enum ProcessThreads {
    /// The kernel's ids of the threads alive now.
    static func ids() -> Set<Int> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(names.compactMap { Int($0) })
    }

    /// How many threads alive now carry `name` (Linux keeps the first 15 bytes of a thread name).
    static func count(named name: String) -> Int {
        let wanted = String(name.utf8.prefix(15))!
        return ids().filter { id in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .newlines) == wanted
        }.count
    }
}

/// A value behind a lock that escaping closures can share (a `Mutex` itself cannot be captured).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value { mutex.withLock { $0 } }

    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}
