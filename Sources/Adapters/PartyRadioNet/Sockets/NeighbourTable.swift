import Glibc
import PartyRadioCore
import Synchronization

/// Which machine an address on the LAN belongs to, as the kernel's neighbour table (ARP for IPv4,
/// NDP for IPv6) knows it: the link-layer (MAC) address it last answered from. Aliases on one
/// interface share their interface's link-layer address, so 64 addresses of one machine are one
/// machine here (docs/SECURITY.md, "One machine, many addresses").
///
/// Read over rtnetlink (an `RTM_GETNEIGH` dump of one interface; no privilege needed) and kept:
/// a lookup is a dictionary hit under a lock, cheap enough for the node's loop and the HTTP
/// server's threads alike. The table is read again when it is older than ``maxAgeNs`` or, at most
/// every ``missIntervalNs``, when an on-link address is not in it. An on-link address still
/// missing is ``MachineID/unresolved(_:)``, and ``lookUp(_:)`` says when to send it something
/// (any datagram makes the kernel resolve it), at most once per address per ``probeIntervalNs``
/// and ``probesPerSecond`` in all, so that spoofed sources cannot make the node chatty.
public final class NeighbourTable: Sendable {
    public static let maxAgeNs: Int64 = 2_000_000_000
    public static let missIntervalNs: Int64 = 50_000_000
    public static let probeIntervalNs: Int64 = 500_000_000
    public static let probesPerSecond = 64
    /// Addresses (and probes) remembered at most; beyond that the table starts afresh.
    static let capacity = 8192

    /// An address as the table keys it: 4 bytes (IPv4, or IPv4-mapped IPv6) or 16 (IPv6).
    typealias Key = [UInt8]

    private struct State {
        var entries: [Key: String] = [:]
        var readAtNs: Int64 = .min / 2
        /// The interface's own addresses, and its prefixes (address and mask, network order).
        var own: Set<Key> = []
        var prefixes: [(address: Key, mask: Key)] = []
        var probedAt: [Key: Int64] = [:]
        var probeWindowStart: Int64 = .min / 2
        var probesInWindow = 0
    }

    private let interfaceName: String
    private let interfaceIndex: Int32
    private let state = Mutex(State())
    /// The netlink socket, opened once (-1 if it could not be: every address then stands for its machine).
    private let descriptor: Int32
    private let dumpSequence = Atomic<UInt32>(1)

    public init(interface: NetworkInterface) {
        interfaceName = interface.name
        interfaceIndex = interface.index
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = (try? Syscall.socket(domain: AF_NETLINK, type: type, protocol: Self.netlinkRoute)) ?? -1
        if descriptor >= 0 {
            // A dump is answered at once; the timeout only guards against a kernel that does not.
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { if descriptor >= 0 { _ = try? Syscall.close(descriptor) } }

    /// The machine at `host` (an address as ``SocketAddress/host`` writes it), and whether the caller
    /// should send it a datagram so that the kernel learns its link-layer address (never when
    /// `probing` is false).
    public func lookUp(_ host: String, probing: Bool = true) -> (machine: MachineID, probe: Bool) {
        guard descriptor >= 0, let key = Self.key(host) else { return (.address(host), false) }
        let now = Self.monotonicNs()
        return state.withLock { state in
            if now - state.readAtNs >= Self.maxAgeNs { read(into: &state, at: now, interface: true) }
            if let mac = state.entries[key] { return (.linkLayer(mac), false) }
            guard !state.own.contains(key), Self.onLink(key, state.prefixes) else { return (.address(host), false) }
            if now - state.readAtNs >= Self.missIntervalNs {
                read(into: &state, at: now)
                if let mac = state.entries[key] { return (.linkLayer(mac), false) }
            }
            return (.unresolved(host), probing && Self.mayProbe(key, state: &state, now: now))
        }
    }

    /// The machine at `host`, without probing: a web guest, whose TCP handshake made the kernel
    /// resolve it already, so a miss reads the table again at once (else aliases coming faster than
    /// ``missIntervalNs`` would each count as a machine of their own).
    public func machine(of host: String) -> MachineID {
        let first = lookUp(host, probing: false).machine
        guard case .unresolved = first, let key = Self.key(host) else { return first }
        return state.withLock { state in
            read(into: &state, at: Self.monotonicNs())
            return state.entries[key].map(MachineID.linkLayer) ?? first
        }
    }

    // MARK: Reading the kernel's table

    /// Reads the kernel's table again (and, with `interface`, the interface's addresses, which
    /// change more rarely than a new guest appears).
    private func read(into state: inout State, at now: Int64, interface: Bool = false) {
        if interface || state.prefixes.isEmpty { (state.own, state.prefixes) = Self.interfacePrefixes(interfaceName) }
        state.readAtNs = now
        let seq = dumpSequence.wrappingAdd(1, ordering: .relaxed).newValue
        var request = Self.dumpRequest(sequence: seq)
        let sent = request.withUnsafeMutableBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { return }
        var entries: [Key: String] = [:]
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        // Parts of the dump until its end (or an error, or a timeout: what came is kept).
        for _ in 0..<1024 {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            let (part, done) = Self.parse(Array(buffer[0..<count]), sequence: seq, interfaceIndex: interfaceIndex)
            entries.merge(part) { _, new in new }
            if done || entries.count >= Self.capacity { break }
        }
        state.entries = entries
        if state.probedAt.count >= Self.capacity { state.probedAt.removeAll() }
    }

    private static func mayProbe(_ key: Key, state: inout State, now: Int64) -> Bool {
        if let last = state.probedAt[key], now - last < probeIntervalNs { return false }
        if now - state.probeWindowStart >= 1_000_000_000 {
            state.probeWindowStart = now
            state.probesInWindow = 0
        }
        guard state.probesInWindow < probesPerSecond else { return false }
        state.probesInWindow += 1
        state.probedAt[key] = now
        return true
    }

    // MARK: rtnetlink (linux/netlink.h, linux/rtnetlink.h, linux/neighbour.h: not in Glibc's module)

    static let netlinkRoute: Int32 = 0
    static let getNeighbours: UInt16 = 30  // RTM_GETNEIGH
    static let newNeighbour: UInt16 = 28  // RTM_NEWNEIGH
    static let flagsDump: UInt16 = 0x0001 | 0x0300  // NLM_F_REQUEST | NLM_F_DUMP
    static let messageError: UInt16 = 2  // NLMSG_ERROR
    static let messageDone: UInt16 = 3  // NLMSG_DONE
    static let attributeDestination: UInt16 = 1  // NDA_DST
    static let attributeLinkLayer: UInt16 = 2  // NDA_LLADDR
    /// NUD_INCOMPLETE | NUD_FAILED: no usable link-layer address (NUD_NOARP entries, such as
    /// multicast ones, carry none worth counting either).
    static let unusableStates: UInt16 = 0x01 | 0x20 | 0x40

    /// `nlmsghdr` (16 bytes) and an all-families `ndmsg` (12 bytes), in the host's byte order.
    static func dumpRequest(sequence: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value) { bytes += $0 } }
        put(UInt32(28))
        put(getNeighbours)
        put(flagsDump)
        put(sequence)
        put(UInt32(0))
        bytes += [UInt8](repeating: 0, count: 12)  // ndm_family AF_UNSPEC, every interface and state
        return bytes
    }

    /// The entries of one part of a neighbour dump: address → link-layer address (lowercase hex,
    /// colons), for `interfaceIndex` only and usable states only; `done` once the dump ended.
    static func parse(_ bytes: [UInt8], sequence: UInt32, interfaceIndex: Int32) -> (entries: [Key: String], done: Bool)
    {
        func u16(_ at: Int) -> UInt16 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt16.self) }
        }
        func u32(_ at: Int) -> UInt32 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
        }
        var entries: [Key: String] = [:]
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(u32(offset))
            let type = u16(offset + 4)
            guard length >= 16, offset + length <= bytes.count else { break }
            defer { offset += (length + 3) & ~3 }
            guard u32(offset + 8) == sequence else { continue }
            if type == messageDone || type == messageError { return (entries, true) }
            guard type == newNeighbour, length >= 28 else { continue }
            let body = offset + 16
            let index = Int32(bitPattern: u32(body + 4))
            let state = u16(body + 8)
            guard index == interfaceIndex, state & unusableStates == 0 else { continue }
            var destination: Key?
            var linkLayer: [UInt8]?
            var attribute = body + 12
            while attribute + 4 <= offset + length {
                let size = Int(u16(attribute))
                guard size >= 4, attribute + size <= offset + length else { break }
                let value = Array(bytes[(attribute + 4)..<(attribute + size)])
                switch u16(attribute + 2) {
                case attributeDestination where value.count == 4 || value.count == 16: destination = value
                case attributeLinkLayer where !value.isEmpty: linkLayer = value
                default: break
                }
                attribute += (size + 3) & ~3
            }
            guard let destination, let linkLayer, linkLayer.contains(where: { $0 != 0 }) else { continue }
            entries[Self.key(bytes: destination)] = Hex.encode(linkLayer).chunked(2).joined(separator: ":")
        }
        return (entries, false)
    }

    // MARK: Addresses

    /// The key of an address's text; nil when it is no numeric address.
    static func key(_ host: String) -> Key? {
        guard let address = SocketAddress(host, port: 0) else { return nil }
        if let v4 = address.addressNetworkOrder { return withUnsafeBytes(of: v4) { Array($0) } }
        return address.ipv6Bytes.map(key(bytes:))
    }

    /// IPv4-mapped IPv6 addresses as the IPv4 address they stand for.
    static func key(bytes: [UInt8]) -> Key {
        if bytes.count == 16 && bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12..<16])
        }
        return bytes
    }

    /// Whether `key` is on the interface's link: IPv6 link-local, or inside one of its prefixes.
    static func onLink(_ key: Key, _ prefixes: [(address: Key, mask: Key)]) -> Bool {
        if key.count == 16 && key[0] == 0xFE && key[1] & 0xC0 == 0x80 { return true }
        return prefixes.contains { prefix in
            prefix.address.count == key.count
                && zip(zip(prefix.address, prefix.mask), key).allSatisfy { pair, byte in
                    pair.0 & pair.1 == byte & pair.1
                }
        }
    }

    /// The interface's own addresses and its prefixes, from getifaddrs(3).
    static func interfacePrefixes(_ name: String) -> (Set<Key>, [(address: Key, mask: Key)]) {
        let found = try? Syscall.withInterfaceAddresses { list -> (Set<Key>, [(address: Key, mask: Key)]) in
            var own = Set<Key>()
            var prefixes: [(address: Key, mask: Key)] = []
            for entry in sequence(first: list, next: { $0?.pointee.ifa_next }) {
                guard let entry, String(cString: entry.pointee.ifa_name) == name, let raw = entry.pointee.ifa_addr,
                    let mask = entry.pointee.ifa_netmask
                else { continue }
                switch Int32(raw.pointee.sa_family) {
                case AF_INET:
                    let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    let bits = mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    own.insert(withUnsafeBytes(of: address) { Array($0) })
                    prefixes.append(
                        (withUnsafeBytes(of: address) { Array($0) }, withUnsafeBytes(of: bits) { Array($0) }))
                case AF_INET6:
                    let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    let bits = mask.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    own.insert(withUnsafeBytes(of: address) { Array($0) })
                    prefixes.append(
                        (withUnsafeBytes(of: address) { Array($0) }, withUnsafeBytes(of: bits) { Array($0) }))
                default:
                    continue
                }
            }
            return (own, prefixes)
        }
        return found ?? ([], [])
    }

    private static func monotonicNs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

extension String {
    /// The string in pieces of `size` characters (the last may be shorter).
    fileprivate func chunked(_ size: Int) -> [Substring] {
        var pieces: [Substring] = []
        var start = startIndex
        while start < endIndex {
            let end = index(start, offsetBy: size, limitedBy: endIndex) ?? endIndex
            pieces.append(self[start..<end])
            start = end
        }
        return pieces
    }
}
