import Synchronization

/// The logging frontend, in the spirit of swift-log: one bootstrap, a no-op default, and a
/// small API that nodes and adapters call. `-v` on any command bootstraps a handler that writes
/// timestamped lines to stderr; without it, every call is a cheap no-op.
///
/// User-facing output is not logging: commands print results and events through the CLI's
/// console; diagnostics (discovery events, datagrams dropped and why, clock estimates, player
/// state changes) go here.
public enum Log {
    /// What a diagnostic is about; the handler prints it as a tag (`[discovery]`).
    public enum Topic: String, Sendable, CaseIterable {
        case node, discovery, wire, clock, player, catalog, media, cli
    }

    /// Receives each enabled line. Called on whatever thread logged; must be thread-safe.
    public typealias Handler = @Sendable (_ topic: Topic, _ message: String) -> Void

    private static let handler = Mutex<Handler?>(nil)
    private static let enabled = Atomic<Bool>(false)

    /// Installs the handler (nil: back to the no-op default). Call once, at start-up.
    public static func bootstrap(_ newHandler: Handler?) {
        handler.withLock { $0 = newHandler }
        enabled.store(newHandler != nil, ordering: .releasing)
    }

    /// Whether a handler is installed; lets callers skip building expensive messages.
    public static var isEnabled: Bool { enabled.load(ordering: .acquiring) }

    /// Logs `message` (built only when logging is on).
    public static func debug(_ topic: Topic, _ message: @autoclosure () -> String) {
        guard isEnabled, let handler = handler.withLock({ $0 }) else { return }
        handler(topic, message())
    }
}
