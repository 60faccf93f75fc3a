import Glibc
import PartyRadioNet
import Synchronization

/// A queue that any thread may push to and that wakes the node's poll loop through a pipe
/// (the self-pipe trick; Glibc's module map does not export eventfd).
///
/// This is how callbacks from other threads (Avahi, signals, the stdin reader, mpv, catalog
/// tasks) reach a node: they only push; the node does the work on its own thread. Its system
/// calls go through the socket layer's `Syscall`, which retries `EINTR`.
public final class Inbox<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    /// Readable whenever items are waiting; the node polls it with its sockets.
    public let wakeDescriptor: Int32
    private let writeDescriptor: Int32

    public init() {
        var fds: [Int32] = [-1, -1]
        // A process out of descriptors gets an inbox that never wakes poll; pushes still queue
        // and the node's loop still drains them on its next turn (it wakes at least every 250 ms).
        if (try? Syscall.retryingOnInterrupt("pipe", { pipe(&fds) })) != nil {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
        if writeDescriptor >= 0 { close(writeDescriptor) }
    }

    public func push(_ item: Element) {
        items.withLock { $0.append(item) }
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already means "wake up".
        _ = try? Syscall.unlessWouldBlock { () throws(SystemCallError) in
            try Syscall.retryingOnInterrupt("write") { write(writeDescriptor, &byte, 1) }
        }
    }

    /// Takes everything waiting.
    public func drain() -> [Element] {
        var buffer = [UInt8](repeating: 0, count: 256)
        while let count = try? Syscall.retryingOnInterrupt("read", { read(wakeDescriptor, &buffer, buffer.count) }),
            count > 0
        {}
        return items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}

/// Waits until one of `descriptors` is readable or `timeoutMs` passes; returns the readable ones.
/// An interrupted wait returns early with nothing readable: callers loop anyway.
public func waitReadable(_ descriptors: [Int32], timeoutMs: Int32) -> Set<Int32> {
    var fds = descriptors.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    let count = poll(&fds, nfds_t(fds.count), timeoutMs)
    guard count > 0 else { return [] }
    return Set(fds.filter { $0.revents != 0 }.map(\.fd))
}
