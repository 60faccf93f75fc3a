import Glibc
import PartyRadioCore
import Synchronization

/// The kernel's neighbour table (ARP for IPv4, NDP for IPv6), read over rtnetlink: the link-layer
/// (MAC) address an IP address on this machine's links answers from. Aliases on one network card
/// share its link-layer address, so it tells one machine with many addresses from many machines.
/// A client beyond a router is not in the table (its router is): it has no answer, and is known by
/// its IP address alone. A guest can change or spoof its link-layer address; this only makes
/// aliases cost more than an `ip addr add` each.
///
/// Shared: ``linkLayerAddress(of:)`` reads the kernel at most every ``refreshNs`` (or, for an
/// address it does not know, every ``missRefreshNs``), so it can be asked for every new connection.
public final class NeighbourTable: Sendable {
    public static let shared = NeighbourTable()

    /// How old a reading may be for a known address.
    public static let refreshNs: Int64 = 2_000_000_000
    /// How often an unknown address makes it read the kernel again.
    public static let missRefreshNs: Int64 = 200_000_000

    private struct Cache {
        var byAddress: [[UInt8]: String] = [:]
        var readAt: Int64 = .min / 2
    }
    private let cache = Mutex(Cache())

    public init() {}

    /// The link-layer address that `address` (an IPv4 or IPv6 literal, a `%zone` ignored) answers
    /// from, as lowercase hex pairs joined by `:`; nil when the table has none (not a neighbour, or
    /// not resolved yet).
    public func linkLayerAddress(of address: String) -> String? {
        guard let key = Self.addressBytes(address) else { return nil }
        let now = Self.monotonicNs()
        let (known, readAt) = cache.withLock { ($0.byAddress[key], $0.readAt) }
        if known != nil && now - readAt < Self.refreshNs { return known }
        if known == nil && now - readAt < Self.missRefreshNs { return nil }
        let read = (try? Self.read()) ?? [:]
        cache.withLock {
            $0.byAddress = read
            $0.readAt = now
        }
        return read[key]
    }

    /// The table as the kernel has it now: IP address bytes (4 or 16) to link-layer address text.
    /// Entries without a link-layer address (incomplete, failed) are left out.
    public static func read() throws(SystemCallError) -> [[UInt8]: String] {
        let descriptor = try Syscall.retryingOnInterrupt("socket(AF_NETLINK)") {
            socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // NETLINK_ROUTE
        }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // nlmsghdr (16 bytes: length, type, flags, sequence, port) + ndmsg (12 bytes, family 0: both).
        var request = [UInt8](repeating: 0, count: 28)
        Self.store(UInt32(28), into: &request, at: 0)
        Self.store(UInt16(30), into: &request, at: 4)  // RTM_GETNEIGH
        Self.store(UInt16(0x301), into: &request, at: 6)  // NLM_F_REQUEST | NLM_F_DUMP
        Self.store(UInt32(1), into: &request, at: 8)
        // No address: a netlink socket sends to the kernel.
        _ = try Syscall.retryingOnInterrupt("send(RTM_GETNEIGH)") {
            request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        }
        var table: [[UInt8]: String] = [:]
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        while true {
            let count = try Syscall.retryingOnInterrupt("recv(RTM_NEWNEIGH)") {
                buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            }
            guard count > 0 else { return table }
            if Self.parse(buffer[0..<count], into: &table) { return table }
        }
    }

    /// Parses one datagram of a neighbour dump into `table`; true when it holds the dump's end.
    static func parse(_ bytes: ArraySlice<UInt8>, into table: inout [[UInt8]: String]) -> Bool {
        var offset = bytes.startIndex
        while offset + 16 <= bytes.endIndex {
            let length = Int(Self.load(UInt32.self, bytes, at: offset))
            let type = Self.load(UInt16.self, bytes, at: offset + 4)
            guard length >= 16, offset + length <= bytes.endIndex else { return true }
            switch type {
            case 3, 2: return true  // NLMSG_DONE, NLMSG_ERROR
            case 28 where length >= 28:  // RTM_NEWNEIGH: ndmsg, then attributes
                var destination: [UInt8]?
                var linkLayer: [UInt8]?
                var attribute = offset + 28
                while attribute + 4 <= offset + length {
                    let attributeLength = Int(Self.load(UInt16.self, bytes, at: attribute))
                    let attributeType = Self.load(UInt16.self, bytes, at: attribute + 2)
                    guard attributeLength >= 4, attribute + attributeLength <= offset + length else { break }
                    let value = Array(bytes[(attribute + 4)..<(attribute + attributeLength)])
                    if attributeType == 1 { destination = value }  // NDA_DST
                    if attributeType == 2 { linkLayer = value }  // NDA_LLADDR
                    attribute += (attributeLength + 3) & ~3
                }
                if let destination, destination.count == 4 || destination.count == 16, let linkLayer,
                    !linkLayer.isEmpty, linkLayer.contains(where: { $0 != 0 })
                {
                    table[destination] = linkLayer.map { Hex.encode([$0]) }.joined(separator: ":")
                }
            default: break
            }
            offset += (length + 3) & ~3
        }
        return false
    }

    /// The bytes of an IPv4 or IPv6 literal (IPv4-mapped IPv6 as IPv4); nil if it is neither.
    static func addressBytes(_ text: String) -> [UInt8]? {
        let plain = String(text.split(separator: "%", maxSplits: 1).first ?? "")
        var v4 = in_addr()
        if inet_pton(AF_INET, plain, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, plain, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }

    private static func load<T: FixedWidthInteger>(_: T.Type, _ bytes: ArraySlice<UInt8>, at offset: Int) -> T {
        // Netlink is in host order: little-endian here.
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }

    private static func store<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<MemoryLayout<T>.size {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    private static func monotonicNs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
