import CMPRISShim
import CSystemd
import Foundation
import PartyRadioCore
import Synchronization

/// A live DJ's client of another MPRIS player on its session bus (`--live-player`, docs/LIVE.md
/// "Now playing from the player"): it chooses the player (``LivePlayerChoice``), reads its
/// `Metadata`, `PlaybackStatus` and `Position` (`Properties.GetAll`) whenever a signal says it may
/// have changed (its `PropertiesChanged` or `Seeked`, a player coming or going: `NameOwnerChanged`)
/// and every ``refreshNs`` besides, and hands what ``LivePlayerState/parse`` makes of it to
/// `onState` when it differs from the last (nil: no player to follow). It calls the player's
/// `Next`, `Previous`, `Pause`, `Play` and `SetPosition` for ``call(_:)``. A bus that goes away
/// leaves the station Live (`onState(nil)`), and the follower connects again every
/// ``reconnectNs`` until the bus is back.
///
/// Threads: a thread of its own owns the bus and makes every bus call (each waits at most
/// ``callTimeoutUs`` for a player that hangs); the C signal callback only marks the state to be
/// read again. ``call(_:)`` and ``close()`` only queue and wake it. `onState` and `log` run on that
/// thread and must only hand off.
public final class MPRISFollower: Sendable {
    /// A player's answer is waited for this long at most.
    public static let callTimeoutUs: UInt64 = 2_000_000
    /// The player's state is read again this often even without a signal (its position moves).
    public static let refreshNs: Int64 = 5_000_000_000
    /// At most this many players are asked whether they play, per refresh.
    static let maxAsked = 16
    /// At most this many calls wait for the follower's thread.
    static let maxQueued = 16

    private let shared: Shared
    private let done = DispatchSemaphore(value: 0)

    /// Connects to the session bus at `address` and starts following; throws when the bus cannot
    /// be reached.
    /// - Parameters:
    ///   - own: bus names never followed (the DJ's own MPRIS player).
    ///   - onState: each new state, on the follower's thread.
    ///   - log: a diagnostic line (`-v`), on the follower's thread.
    public init(
        address: String, choice: LivePlayerChoice, own: Set<String> = [],
        onState: @escaping @Sendable (LivePlayerState?) -> Void, log: @escaping @Sendable (String) -> Void
    ) throws(MPRISError) {
        let shared = Shared()
        self.shared = shared
        var error: Int32 = 0
        let handle = prmpris_follower_open(
            address, Unmanaged.passUnretained(shared).toOpaque(), followerSignal, &error)
        guard let handle else {
            shared.state.withLock { $0.stopping = true }  // no thread to wait for: close() (and deinit) return
            throw MPRISError(
                description: "the session bus at \(address): \(String(cString: strerror(-error)))")
        }
        let bus = FollowerBus(handle)
        let thread = Thread { [shared, done] in
            let comm = open("/proc/thread-self/comm", O_WRONLY)
            if comm >= 0 {
                _ = Array("dj-live-player".utf8).withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
                Glibc.close(comm)
            }
            var bus = bus
            while true {
                var loop = Loop(bus: bus, shared: shared, choice: choice, own: own, onState: onState, log: log)
                let lost = loop.run()
                shared.bus.withLock { $0 = nil }  // no wake-up reaches the pipe once it is closed
                prmpris_follower_close(bus.handle)
                // The bus went away (the session's bus restarted): the station shows Live, and the
                // follower connects again when the bus is back.
                guard lost, let again = Self.reconnect(address, shared: shared, log: log) else { break }
                bus = again
            }
            done.signal()
        }
        shared.bus.withLock { $0 = bus }
        thread.start()
    }

    /// Asks the followed player to go to the next or previous track, pause or play (from the node's
    /// thread: queued for the follower's).
    public func call(_ call: LivePlayerCall) {
        // A follower whose bus went away takes no more (a crowd skip asks again every 5 s).
        shared.state.withLock { if $0.calls.count < Self.maxQueued { $0.calls.append(call) } }
        shared.wakeUp()
    }

    /// How often a follower whose bus went away tries it again.
    static let reconnectNs: Int64 = 2_000_000_000

    /// The bus at `address` again, tried every ``reconnectNs`` until it answers; nil once the
    /// follower is closed meanwhile. On the follower's thread.
    private static func reconnect(_ address: String, shared: Shared, log: @Sendable (String) -> Void) -> FollowerBus? {
        while true {
            let deadline = MPRISService.monotonicNs() + reconnectNs
            while MPRISService.monotonicNs() < deadline {
                if shared.state.withLock({ $0.stopping }) { return nil }
                usleep(50_000)
            }
            var error: Int32 = 0
            guard
                let handle = prmpris_follower_open(
                    address, Unmanaged.passUnretained(shared).toOpaque(), followerSignal, &error)
            else { continue }
            let bus = FollowerBus(handle)
            shared.bus.withLock { $0 = bus }
            shared.state.withLock { $0.dirty = true }
            log("the session bus is back: following a player again")
            return bus
        }
    }

    /// Leaves the bus and waits for the follower's thread; idempotent.
    public func close() {
        let first = shared.state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        shared.wakeUp()
        done.wait()
    }

    deinit { close() }

    /// What the C callback and the other threads reach: flags and queued calls under a lock.
    final class Shared: Sendable {
        struct State {
            var dirty = true
            var stopping = false
            var calls: [LivePlayerCall] = []
        }
        let state = Mutex(State())
        /// The bus while the follower's thread runs (its wake pipe is written under this lock).
        let bus = Mutex<FollowerBus?>(nil)
        func wakeUp() { bus.withLock { if let bus = $0 { prmpris_follower_wake(bus.handle) } } }
    }

    /// The follower's thread: the choice, the bus calls and what was last handed on.
    private struct Loop {
        let bus: FollowerBus
        let shared: Shared
        let choice: LivePlayerChoice
        let own: Set<String>
        let onState: @Sendable (LivePlayerState?) -> Void
        let log: @Sendable (String) -> Void
        /// The bus name followed now.
        var followed: String?
        /// What `onState` was last given (nothing yet: nil, not `.some(nil)`).
        var handed: LivePlayerState??
        var lastRefreshNs: Int64 = 0
        /// Bus names whose answers could not be read, said once each.
        var unreadable: Set<String> = []
        /// Whether the follower said that no player is there (once, until one is followed).
        var saidNone = false

        init(
            bus: FollowerBus, shared: Shared, choice: LivePlayerChoice, own: Set<String>,
            onState: @escaping @Sendable (LivePlayerState?) -> Void, log: @escaping @Sendable (String) -> Void
        ) {
            self.bus = bus
            self.shared = shared
            self.choice = choice
            self.own = own
            self.onState = onState
            self.log = log
        }

        /// Follows until the follower is closed (false) or the bus goes away (true).
        mutating func run() -> Bool {
            while true {
                let (stopping, dirty, calls) = shared.state.withLock { state in
                    defer {
                        state.dirty = false
                        state.calls = []
                    }
                    return (state.stopping, state.dirty, state.calls)
                }
                if stopping { return false }
                let now = MPRISService.monotonicNs()
                if dirty || now - lastRefreshNs >= MPRISFollower.refreshNs {
                    lastRefreshNs = now
                    refresh()
                }
                for call in calls { make(call) }
                if prmpris_follower_process(bus.handle, 1000) < 0 {
                    log("the session bus went away: no player followed until it is back")
                    hand(nil)
                    return true
                }
            }
        }

        /// Chooses the player again and reads its state.
        private mutating func refresh() {
            var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            guard prmpris_follower_list_names(bus.handle, &names) >= 0, let names else {
                return log("cannot list the session bus's names")
            }
            var all: [String] = []
            var index = 0
            while let name = names[index] {
                all.append(String(cString: name))
                index += 1
            }
            prmpris_free_strv(names)
            let choice = self.choice
            let candidates = choice.candidates(among: all, own: own)
            var asked = 0
            var read: [String: LivePlayerState] = [:]
            let picked = choice.pick(candidates: candidates, current: followed) { name in
                if read[name] == nil {
                    guard asked < MPRISFollower.maxAsked else { return false }
                    asked += 1
                    guard let state = readState(name) else { return false }
                    read[name] = state
                }
                return read[name]?.status == .playing
            }
            if picked != followed || (picked == nil && !saidNone) {
                log(
                    picked.map { "following the MPRIS player \($0)" }
                        ?? "no MPRIS player to follow on the session bus: the station shows Live")
                followed = picked
                saidNone = picked == nil
            }
            guard let picked else { return hand(nil) }
            guard let state = read[picked] ?? readState(picked) else {
                // It did not answer (or went away meanwhile): the next signal or refresh says more.
                return
            }
            hand(state)
        }

        /// The player's state from its properties; nil when it did not answer them.
        private mutating func readState(_ name: String) -> LivePlayerState? {
            var reply: OpaquePointer?
            let result = prmpris_follower_get_all(bus.handle, name, MPRISFollower.callTimeoutUs, &reply)
            defer { sd_bus_message_unref(reply) }
            guard result >= 0, let reply, let properties = PlayerValueReader.playerProperties(reply) else {
                if unreadable.insert(name).inserted {
                    log("cannot read the MPRIS player \(name)'s properties (\(String(cString: strerror(-result))))")
                }
                return nil
            }
            unreadable.remove(name)
            return LivePlayerState.parse(
                player: LivePlayerChoice.shortName(name), metadata: properties.metadata, status: properties.status,
                positionUs: properties.position)
        }

        private mutating func hand(_ state: LivePlayerState?) {
            if let handed, handed == state { return }
            handed = .some(state)
            onState(state)
        }

        private func make(_ call: LivePlayerCall) {
            guard let followed else { return log("no MPRIS player to call \(call.member) on") }
            var errorName = [CChar](repeating: 0, count: 256)
            let result =
                if case .setPosition(let trackID, let positionUs) = call {
                    prmpris_follower_set_position(
                        bus.handle, followed, trackID, positionUs, MPRISFollower.callTimeoutUs, &errorName,
                        errorName.count)
                } else {
                    prmpris_follower_call(
                        bus.handle, followed, call.member, MPRISFollower.callTimeoutUs, &errorName, errorName.count)
                }
            if result < 0 {
                let name = String(decoding: errorName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                log(
                    "the MPRIS player \(followed) refused \(call.member): "
                        + (name.isEmpty ? String(cString: strerror(-result)) : name))
            } else {
                log("asked the MPRIS player \(followed) for \(call.member)")
            }
        }
    }
}

/// The follower's sd-bus connection. @unchecked Sendable: made before the follower's thread starts
/// and used by that thread alone (other threads only write to its wake pipe).
final class FollowerBus: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
}

/// A signal that may change what a player says: the next turn of the follower's thread reads again.
private func followerSignal(
    _ context: UnsafeMutableRawPointer?, _ member: UnsafePointer<CChar>?, _ sender: UnsafePointer<CChar>?
) {
    guard let context else { return }
    let shared = Unmanaged<MPRISFollower.Shared>.fromOpaque(context).takeUnretainedValue()
    shared.state.withLock { $0.dirty = true }
}
