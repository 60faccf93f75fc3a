/// On a dual-stack network a DJ sends every group datagram twice, once to each family's group
/// (docs/PROTOCOL.md, "IPv6"), and a listener that joined both hears it twice. This drops the
/// second copy before the machine sees it, so the twin is not counted as a replay.
///
/// A datagram is the twin of one that came from the *other* family's group within
/// ``windowNs`` with exactly the same bytes (signature and all; only the DJ can make those).
/// Each datagram has at most one twin: a match is forgotten. Memory is bounded: at most
/// ``capacity`` datagrams are held, the oldest going first.
public struct GroupTwins {
    public static let windowNs: Int64 = 2 * Nanos.perSecond
    public static let capacity = 256

    private struct Seen {
        var family: AddressFamily
        var at: LocalTime
    }

    private var seen: [[UInt8]: Seen] = [:]
    private var order: [([UInt8], LocalTime)] = []

    /// How many datagrams are held.
    public var held: Int { order.count }

    /// Whether to hand `bytes`, heard from the group of family `family`, to the machine.
    public mutating func admit(_ bytes: [UInt8], family: AddressFamily, at now: LocalTime) -> Bool {
        while let first = order.first, now - first.1 > Self.windowNs || order.count >= Self.capacity {
            order.removeFirst()
            if let entry = seen[first.0], entry.at == first.1 { seen[first.0] = nil }
        }
        if let twin = seen[bytes], twin.family != family, now - twin.at <= Self.windowNs {
            seen[bytes] = nil
            return false
        }
        seen[bytes] = Seen(family: family, at: now)
        order.append((bytes, now))
        return true
    }
}

/// An IP address family, as the core sees it (the socket layer has its own, with the C values).
public enum AddressFamily: Hashable, Sendable {
    case ipv4
    case ipv6
}
