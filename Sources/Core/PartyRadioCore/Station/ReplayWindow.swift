/// Rejects replayed datagrams per sender with a 64-entry sliding window (as IPsec does), so
/// that reordered packets still pass but a packet seen before never does twice.
public struct ReplayWindow: Sendable {
    private struct Window: Sendable {
        var highest: UInt64
        var seen: UInt64  // bit i set: highest - i was seen
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
            windows[sender] = Window(highest: sequence, seen: 1, lastUsed: clock)
            return true
        }
        defer { windows[sender] = window }
        window.lastUsed = clock
        if sequence > window.highest {
            let shift = sequence - window.highest
            window.seen = shift >= 64 ? 1 : (window.seen << shift) | 1
            window.highest = sequence
            return true
        }
        let age = window.highest - sequence
        guard age < 64 else { return false }
        let bit: UInt64 = 1 << age
        guard window.seen & bit == 0 else { return false }
        window.seen |= bit
        return true
    }

    /// Whether ``accept(_:from:)`` would take `sequence` from `sender`, without recording it: a
    /// replay is dropped before its signature costs a check.
    public func wouldAccept(_ sequence: UInt64, from sender: PublicKey) -> Bool {
        guard let window = windows[sender] else { return true }
        if sequence > window.highest { return true }
        let age = window.highest - sequence
        return age < 64 && window.seen & (1 << age) == 0
    }

    /// Forgets a sender (after a goodbye), so a restarted peer is heard again.
    public mutating func forget(_ sender: PublicKey) { windows.removeValue(forKey: sender) }
}
