/// Rejects replayed datagrams per sender, while letting reordered ones through once.
///
/// Sequence numbers are the sender machine's real-time clock in nanoseconds, shared by every
/// process there with the same key, so two processes' datagrams may arrive out of order by
/// microseconds or more: a window of 64 *numbers* (IPsec's) would be 64 ns here. Instead each
/// sender keeps a floor and the numbers it accepted above it: a number at or below the floor, or
/// one seen before, is a replay. The floor trails the highest number by ``spanNs`` (5 s), and
/// rises further only past ``remembered`` numbers, a memory backstop above what one key sends.
public struct ReplayWindow: Sendable {
    /// How far behind the newest datagram an older one may still arrive (reordered, or from
    /// another process with the same key).
    public static let spanNs: UInt64 = 5_000_000_000
    /// Accepted numbers kept per sender at most (4 KiB): a stalled DJ drains one family's socket
    /// before the other's, so a number may come after a second or more of its key's newer ones
    /// (a listener's clock burst, watch pings to both addresses: about 65 a second at its peak).
    /// What one key legitimately sends in ``spanNs`` stays below this.
    public static let remembered = 512

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
        window.seen.insert(sequence, at: Self.index(of: sequence, in: window.seen))
        window.highest = max(window.highest, sequence)
        if window.highest > Self.spanNs { window.floor = max(window.floor, window.highest - Self.spanNs) }
        if window.seen.count > Self.remembered { window.floor = max(window.floor, window.seen.removeFirst()) }
        let floor = window.floor
        window.seen.removeFirst(window.seen.firstIndex { $0 > floor } ?? window.seen.count)
        return true
    }

    /// Whether ``accept(_:from:)`` would take `sequence` from `sender`, without recording it: a
    /// replay is dropped before its signature costs a check.
    public func wouldAccept(_ sequence: UInt64, from sender: PublicKey) -> Bool {
        guard let window = windows[sender] else { return true }
        return Self.isNew(sequence, in: window)
    }

    private static func isNew(_ sequence: UInt64, in window: Window) -> Bool {
        guard sequence > window.floor else { return false }
        let index = index(of: sequence, in: window.seen)
        return index == window.seen.endIndex || window.seen[index] != sequence
    }

    /// Where `sequence` is, or would go, in the ascending `seen` (binary search).
    private static func index(of sequence: UInt64, in seen: [UInt64]) -> Int {
        var (low, high) = (0, seen.count)
        while low < high {
            let middle = (low + high) / 2
            if seen[middle] < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// How many numbers are kept for `sender` (for tests of the bound).
    func rememberedCount(of sender: PublicKey) -> Int { windows[sender]?.seen.count ?? 0 }

    /// Forgets a sender (after a goodbye), so a restarted peer is heard again.
    public mutating func forget(_ sender: PublicKey) { windows.removeValue(forKey: sender) }
}
