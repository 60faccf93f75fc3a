import CMicroHTTPDShim
import Glibc
import PartyRadioCore
import Synchronization

/// Carries out the ``ConnectionTable`` on libmicrohttpd's connections: its accept policy refuses
/// or admits each new connection (and shuts down the ones the table gives way), its connection
/// notifications and request callbacks keep the table's phases. The policy itself is the table's.
///
/// A connection is closed by `shutdown(2)` on its socket, under the lock: libmicrohttpd's thread
/// for it sees the end at once and closes it, and tells us (`closed`) before it closes the socket,
/// so a socket number here is never one reused by a later connection.
final class ConnectionGuard: Sendable {
    private struct State {
        var table: ConnectionTable
        /// libmicrohttpd's connection (its pointer's bits) → the table's ID.
        var byConnection: [UInt: ConnectionTable.ID] = [:]
        var sockets: [ConnectionTable.ID: Int32] = [:]
        /// Admitted by the accept policy, not yet started (the next `started` is it).
        var unbound: ConnectionTable.ID?
        var refused = 0
        var evicted = 0
    }

    /// The machine an address belongs to (its link-layer address), nil when not known.
    let machineOf: @Sendable (String) -> String?
    private let state: Mutex<State>

    init(limits: ConnectionTable.Limits, machineOf: @escaping @Sendable (String) -> String?) {
        self.machineOf = machineOf
        state = Mutex(State(table: ConnectionTable(limits: limits)))
    }

    /// The accept policy, on libmicrohttpd's listening thread: whether to take a connection from
    /// `address`.
    func admit(address: String) -> Bool {
        let machine = machineOf(address).map { "link " + $0 } ?? address
        let now = Self.now()
        return state.withLock { state in
            if let stale = state.unbound {  // admitted, then never started: gone
                state.table.closed(stale)
                state.unbound = nil
            }
            switch state.table.open(address: address, machine: machine, now: now) {
            case .refuse:
                state.refused += 1
                return false
            case .admit(let id, let closing):
                state.unbound = id
                Self.shut(closing, &state)
                return true
            }
        }
    }

    /// libmicrohttpd started the connection the accept policy just admitted.
    func started(_ connection: OpaquePointer) {
        let socket = prmhd_connection_fd(connection)
        state.withLock { state in
            guard let id = state.unbound else { return }
            state.unbound = nil
            state.byConnection[Self.key(connection)] = id
            state.sockets[id] = socket
        }
    }

    /// The connection is closed (libmicrohttpd closes its socket after this returns).
    func closed(_ connection: OpaquePointer) {
        state.withLock { state in
            guard let id = state.byConnection.removeValue(forKey: Self.key(connection)) else { return }
            state.sockets[id] = nil
            state.table.closed(id)
        }
    }

    /// The connection has sent a request's headers.
    func requestStarted(_ connection: OpaquePointer) {
        let now = Self.now()
        state.withLock { state in
            guard let id = state.byConnection[Self.key(connection)] else { return }
            state.table.requestStarted(id, now: now)
        }
    }

    /// The connection's answer is over.
    func requestEnded(_ connection: OpaquePointer) {
        let now = Self.now()
        state.withLock { state in
            guard let id = state.byConnection[Self.key(connection)] else { return }
            state.table.requestEnded(id, now: now)
        }
    }

    /// Whether the connection may hold an event stream (closing others for it if the table says so).
    func streamStarting(_ connection: OpaquePointer) -> Bool {
        let now = Self.now()
        return state.withLock { state in
            guard let id = state.byConnection[Self.key(connection)] else { return true }
            switch state.table.streamStarting(id, now: now) {
            case .refuse:
                state.refused += 1
                return false
            case .admit(_, let closing):
                Self.shut(closing, &state)
                return true
            }
        }
    }

    /// What the table holds now, and what it refused and closed so far.
    var counts: (open: Int, streams: Int, refused: Int, evicted: Int) {
        state.withLock { ($0.table.count, $0.table.streamCount, $0.refused, $0.evicted) }
    }

    private static func shut(_ ids: [ConnectionTable.ID], _ state: inout State) {
        for id in ids {
            state.evicted += 1
            guard let socket = state.sockets[id], socket >= 0 else { continue }
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    private static func now() -> LocalTime {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return LocalTime(ns: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }
}

/// libmicrohttpd's accept policy: asks the registry's guard.
func mediaServerAcceptPolicy(
    context: UnsafeMutableRawPointer?, address: UnsafePointer<sockaddr>?, length: socklen_t
) -> MHD_Result {
    guard let context else { return .NO }
    var text = [CChar](repeating: 0, count: 64)
    guard prmhd_address_text(address, &text, text.count) == 0 else { return .NO }
    let registry = Unmanaged<MediaServer.Registry>.fromOpaque(context).takeUnretainedValue()
    let client = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return registry.connections.admit(address: client) ? .YES : .NO
}

/// libmicrohttpd's connection notification: started (on the listening thread), closed.
func mediaServerConnectionNotice(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, code: MHD_ConnectionNotificationCode
) {
    guard let context, let connection else { return }
    let registry = Unmanaged<MediaServer.Registry>.fromOpaque(context).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        registry.connections.started(connection)
    } else {
        registry.connections.closed(connection)
    }
}
