import Glibc
import Synchronization

/// Writes straight to file descriptors 1 and 2: unbuffered, so lines reach a pipe at once, and
/// free of the C `stdout` global that Swift 6 rightly calls shared mutable state.
enum DescriptorOutput {
    /// One lock per stream, so a line written from one thread (a log line, an event) is never
    /// cut into by another thread's; a blocked stdout does not hold up stderr.
    private static let outLock = Mutex(())
    private static let errLock = Mutex(())
    /// While a live view is on the terminal, its screen (``LiveScreen/attach()``): every write goes
    /// through it, so that nothing lands in the middle of the view.
    private static let owner = Mutex<(@Sendable (String, Console.Stream) -> Void)?>(nil)
    /// Where stderr's text goes: descriptor 2, or the terminal's own descriptor while a live view
    /// reads what C libraries write to descriptor 2 (``StderrCapture``).
    private static let errDescriptor = Mutex<Int32>(STDERR_FILENO)

    static func write(_ text: String, to stream: Console.Stream) {
        if let owner = owner.withLock({ $0 }) { return owner(text, stream) }
        writeDirectly(text, to: stream)
    }

    /// Writes past the owner: the live screen's own drawing.
    static func writeDirectly(_ text: String, to stream: Console.Stream) {
        switch stream {
        case .out: outLock.withLock { _ in write(text, descriptor: STDOUT_FILENO) }
        case .err:
            let descriptor = errDescriptor.withLock { $0 }
            errLock.withLock { _ in write(text, descriptor: descriptor) }
        }
    }

    /// Sends stderr's text to `descriptor` from now on.
    static func setErrorDescriptor(_ descriptor: Int32) { errDescriptor.withLock { $0 = descriptor } }

    /// Hands every later write to `owner` (nil: back to the descriptors).
    static func setOwner(_ newOwner: (@Sendable (String, Console.Stream) -> Void)?) {
        owner.withLock { $0 = newOwner }
    }

    /// Writes all of `text`, retrying after a signal and after a short write; gives up silently
    /// when the reader has gone (EPIPE and the like: there is no one left to tell).
    private static func write(_ text: String, descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
