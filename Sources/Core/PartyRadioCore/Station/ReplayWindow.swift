/// Rejects replayed datagrams per sender, while letting reordered ones through once.
///
/// Sequence numbers are the sender machine's real-time clock in nanoseconds, shared by every
/// process there with the same key, so two processes' datagrams may arrive out of order by
/// microseconds or more: a window of 64 *numbers* (IPsec's) would be 64 ns here. Instead each
/// sender keeps a floor and the numbers it accepted above it: a number at or below the floor, or
/// one seen before, is a replay. The floor trails the highest number by ``spanNs`` (5 s), and
/// rises further when more than ``remembered`` numbers are kept, so memory per sender is bounded.
public struct ReplayWindow: Sendable {
    /// How far behind the newest datagram an older one may still arrive (reordered, or from
    /// another process with the same key).
    public static let spanNs: UInt64 = 5_000_000_000
    /// Accepted numbers kept per sender above the floor.
    public static let remembered = 64

    private struct Window: Sendable {
        var highest: UInt64
        var floor: UInt64
        /// Accepted numbers above the floor, ascending.
        var seen: [UInt64]
        var lastUsed: UInt64
    }

    private var windows: [PublicKey: Window] = [:]
    private var clock: UInt64 = 0
    /// Senders remembered at most; the least recently heard is forgotten first.
    public let capacity: Int

    public init(capacity: Int = 4096) { self.capacity = capacity }

    /// Returns true and records `sequence` if it is new for `sender`.
    public mutating func accept(_ sequence: UInt64, from sender: PublicKey) -> Bool {
        clock += 1
        guard var window = windows[sender] else {
            if windows.count >= capacity, let oldest = windows.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                windows.removeValue(forKey: oldest.key)
            }
            let floor = sequence > Self.spanNs ? sequence - Self.spanNs : 0
            windows[sender] = Window(highest: sequence, floor: floor, seen: [sequence], lastUsed: clock)
            return true
        }
        defer { windows[sender] = window }
        window.lastUsed = clock
        guard Self.isNew(sequence, in: window) else { return false }
        let index = window.seen.firstIndex { $0 > sequence } ?? window.seen.endIndex
        window.seen.insert(sequence, at: index)
        window.highest = max(window.highest, sequence)
        if window.highest > Self.spanNs { window.floor = max(window.floor, window.highest - Self.spanNs) }
        if window.seen.count > Self.remembered { window.floor = max(window.floor, window.seen.removeFirst()) }
        let floor = window.floor
        window.seen.removeAll { $0 <= floor }
        return true
    }

    /// Whether ``accept(_:from:)`` would take `sequence` from `sender`, without recording it: a
    /// replay is dropped before its signature costs a check.
    public func wouldAccept(_ sequence: UInt64, from sender: PublicKey) -> Bool {
        guard let window = windows[sender] else { return true }
        return Self.isNew(sequence, in: window)
    }

    private static func isNew(_ sequence: UInt64, in window: Window) -> Bool {
        sequence > window.floor && !window.seen.contains(sequence)
    }

    /// Forgets a sender (after a goodbye), so a restarted peer is heard again.
    public mutating func forget(_ sender: PublicKey) { windows.removeValue(forKey: sender) }
}
