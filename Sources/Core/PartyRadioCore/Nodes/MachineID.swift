/// A guest's machine as the LAN sees it, for the rules that count machines rather than keys (one
/// voter per machine, chat and request limits, mute): keys cost nothing to make, and on a LAN
/// neither do addresses (a machine may hold any number of aliases on one interface), but aliases on
/// one interface share its link-layer (MAC) address. The runtime looks the sender's address up in
/// the kernel's neighbour table and hands the machine its answer with each datagram and web action
/// (docs/SECURITY.md, "One machine, many addresses").
public enum MachineID: Hashable, Sendable, CustomStringConvertible {
    /// On the DJ's link, at this link-layer address (lowercase hex bytes joined by colons).
    case linkLayer(String)
    /// Known by its IP address alone: beyond a router (the neighbour table holds the router, not
    /// the sender), the DJ's own machine, or a node that does not look (the simulator by default,
    /// unit tests). Also what a web guest's or a datagram's machine is when the runtime says nothing.
    case address(String)
    /// On the DJ's link, but the neighbour table has no link-layer address for it yet: the runtime
    /// has asked the kernel to find it (a datagram back makes the kernel resolve the address). What
    /// is counted per machine (a vote, a chat line, a request) waits for the guest's next retry.
    case unresolved(String)

    /// The key the DJ's books count by: `link:` and the link-layer address, else the IP address
    /// itself (as books saved before machines were counted hold it).
    public var key: String {
        switch self {
        case .linkLayer(let mac): "link:\(mac)"
        case .address(let host), .unresolved(let host): host
        }
    }

    /// Whether the machine is known well enough to count by.
    public var isResolved: Bool {
        if case .unresolved = self { false } else { true }
    }

    public var description: String {
        switch self {
        case .linkLayer(let mac): "link-layer \(mac)"
        case .address(let host): host
        case .unresolved(let host): "\(host) (link-layer address not yet known)"
        }
    }
}

extension MachineID {
    /// Whether a raw datagram may carry what the DJ counts per machine (a vote, a chat line, a
    /// request or a vote on one; a sealed one may), so that the runtime asks the kernel to resolve
    /// its sender's link-layer address for these only. Read from the header's kind byte, before
    /// anything is checked: a wrong guess costs one empty datagram at most.
    public static func isCountedPerMachine(_ bytes: [UInt8]) -> Bool {
        if SealedDatagram.isSealed(bytes) { return true }
        guard bytes.count > 3, bytes[0] == MessageHeader.magic[0], bytes[1] == MessageHeader.magic[1] else {
            return false
        }
        let kind = bytes[3] & 0x7F
        return [MessageKind.vote, .chatSend, .requestSend, .requestVote].contains { $0.rawValue == kind }
    }
}
