/// Which connections the DJ's HTTP server keeps when the LAN asks for more than it holds: the
/// policy, pure, over a table of the open connections. The server only carries it out (refuses a
/// connection, or shuts the ones named down).
///
/// A LAN address costs nothing (one machine can hold dozens of aliases), so a cap per address alone
/// lets one machine fill the server. The table therefore also knows each connection's *machine*:
/// the link-layer address its IP address answers from (aliases on one network card share it), or
/// the IP address itself when the neighbour table does not know it (a client beyond a router).
/// A cap per subnet would not help: on a LAN every guest is in the same /24 or /64.
///
/// The rules, in order:
/// - **a deadline for a request's headers**: a connection that has not finished sending a request's
///   headers ``Limits/headerDeadlineNs`` after it opened (or after its last answer) is closed at the
///   next decision (a slow sender, one header line every few seconds, is never idle);
/// - **per address**: at most ``Limits/perAddress`` connections from one IP address;
/// - **fair shares when full**: with ``Limits/total`` connections open, a newcomer from a machine
///   holding fewer than the machine holding the most takes a slot from that machine (its connection
///   waiting longest for a request's headers first, then its oldest event stream, then its oldest
///   other connection); a newcomer from the machine holding the most is refused. Whoever fills the
///   server makes room for everybody else;
/// - **event streams** (long-lived by design) have a cap of their own, ``Limits/streams``, shared
///   the same way, so that most slots stay for short requests and media.
public struct ConnectionTable: Sendable {
    public typealias ID = UInt64

    public struct Limits: Sendable, Equatable {
        /// Connections open at once from one IP address.
        public var perAddress: Int
        /// Connections open at once in all.
        public var total: Int
        /// Event streams open at once in all.
        public var streams: Int
        /// How long a connection may take to send a request's headers, from its opening or its
        /// last answer.
        public var headerDeadlineNs: Int64

        /// A browser opens at most 6 connections to a host, a listener 2; the page holds one stream.
        public init(perAddress: Int = 8, total: Int = 512, streams: Int = 256, headerDeadlineNs: Int64 = 10_000_000_000)
        {
            self.perAddress = max(1, perAddress)
            self.total = max(self.perAddress, total)
            self.streams = min(self.total, max(1, streams))
            self.headerDeadlineNs = max(1, headerDeadlineNs)
        }
    }

    /// What a connection is doing, and since when.
    public enum Phase: Sendable, Equatable {
        /// Sending (or about to send) a request's headers.
        case awaitingRequest
        /// Its request is being answered (a page, an API answer, a file).
        case serving
        /// Holding an event stream.
        case streaming
    }

    public struct Entry: Sendable, Equatable {
        public var address: String
        public var machine: String
        public var opened: LocalTime
        public var phase: Phase
        public var phaseSince: LocalTime
    }

    /// Why a connection or a stream was refused.
    public enum Refusal: Sendable, Equatable {
        /// Its address holds ``Limits/perAddress`` already.
        case address
        /// The server (or its streams) is full, and the newcomer's machine holds the most.
        case fullest
    }

    public enum Decision: Sendable, Equatable {
        /// Take it (as `id`, for an opening connection), after closing these connections.
        case admit(ID, closing: [ID])
        case refuse(Refusal)
    }

    public let limits: Limits
    public private(set) var entries: [ID: Entry] = [:]
    private var perAddress: [String: Int] = [:]
    private var perMachine: [String: Int] = [:]
    private var streamsPerMachine: [String: Int] = [:]
    public private(set) var streamCount = 0
    private var nextID: ID = 1

    public init(limits: Limits = Limits()) { self.limits = limits }

    public var count: Int { entries.count }

    /// A connection from `address` (on `machine`) opens at `now`.
    public mutating func open(address: String, machine: String, now: LocalTime) -> Decision {
        var closing = expired(at: now)
        for id in closing { remove(id) }
        if perAddress[address, default: 0] >= limits.perAddress { return .refuse(.address) }
        if entries.count >= limits.total {
            guard let victim = victim(for: machine, among: perMachine, streamsOnly: false) else {
                return .refuse(.fullest)
            }
            remove(victim)
            closing.append(victim)
        }
        let id = nextID
        nextID += 1
        entries[id] = Entry(address: address, machine: machine, opened: now, phase: .awaitingRequest, phaseSince: now)
        perAddress[address, default: 0] += 1
        perMachine[machine, default: 0] += 1
        return .admit(id, closing: closing)
    }

    /// Connection `id` has sent a request's headers: it is being answered.
    public mutating func requestStarted(_ id: ID, now: LocalTime) {
        guard let entry = entries[id], entry.phase == .awaitingRequest else { return }
        entries[id]?.phase = .serving
        entries[id]?.phaseSince = now
    }

    /// Connection `id`'s answer is an event stream: whether it may hold one (and which streams
    /// to close for it).
    public mutating func streamStarting(_ id: ID, now: LocalTime) -> Decision {
        guard let entry = entries[id] else { return .refuse(.fullest) }
        if entry.phase == .streaming { return .admit(id, closing: []) }
        var closing: [ID] = []
        if streamCount >= limits.streams {
            guard let victim = victim(for: entry.machine, among: streamsPerMachine, streamsOnly: true) else {
                return .refuse(.fullest)
            }
            remove(victim)
            closing.append(victim)
        }
        entries[id]?.phase = .streaming
        entries[id]?.phaseSince = now
        streamCount += 1
        streamsPerMachine[entry.machine, default: 0] += 1
        return .admit(id, closing: closing)
    }

    /// Connection `id`'s answer is over (the connection may carry another request).
    public mutating func requestEnded(_ id: ID, now: LocalTime) {
        guard let entry = entries[id] else { return }
        if entry.phase == .streaming { dropStream(entry.machine) }
        entries[id]?.phase = .awaitingRequest
        entries[id]?.phaseSince = now
    }

    /// Connection `id` is closed (by either side, or because this table said so: then it is gone
    /// already and nothing changes).
    public mutating func closed(_ id: ID) { remove(id) }

    /// The connections past the header deadline at `now`.
    private func expired(at now: LocalTime) -> [ID] {
        entries.compactMap { id, entry in
            entry.phase == .awaitingRequest && now - entry.phaseSince > limits.headerDeadlineNs ? id : nil
        }.sorted()
    }

    /// The connection to close for a newcomer from `machine`: one of the machine holding the most
    /// (in `counts`), unless that is the newcomer's own (nil: refuse the newcomer).
    private func victim(for machine: String, among counts: [String: Int], streamsOnly: Bool) -> ID? {
        let own = counts[machine, default: 0]
        // The fullest machine; among equals the one with the smallest name, so that the choice
        // does not depend on the dictionary's order.
        guard let top = counts.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }),
            top.value > own, top.key != machine
        else { return nil }
        let fullest = top.key
        func rank(_ entry: Entry) -> Int {
            switch entry.phase {
            case .awaitingRequest: 0
            case .streaming: 1
            case .serving: 2
            }
        }
        return entries.filter { $0.value.machine == fullest && (!streamsOnly || $0.value.phase == .streaming) }
            .min { a, b in
                let (ra, rb) = (rank(a.value), rank(b.value))
                if ra != rb { return ra < rb }
                if a.value.phaseSince != b.value.phaseSince { return a.value.phaseSince < b.value.phaseSince }
                return a.key < b.key
            }?.key
    }

    private mutating func remove(_ id: ID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.phase == .streaming { dropStream(entry.machine) }
        Self.decrement(&perAddress, entry.address)
        Self.decrement(&perMachine, entry.machine)
    }

    private mutating func dropStream(_ machine: String) {
        streamCount -= 1
        Self.decrement(&streamsPerMachine, machine)
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        let left = counts[key, default: 0] - 1
        counts[key] = left > 0 ? left : nil
    }
}
