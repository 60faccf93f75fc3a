import CMPRISShim
import CSystemd
import Foundation
import Synchronization

/// A D-Bus value as MPRIS needs them (each case is one D-Bus signature).
public enum DBusValue: Hashable, Sendable {
    case string(String)
    case bool(Bool)
    case double(Double)
    case int64(Int64)
    case objectPath(String)
    case strings([String])
    /// `a{sv}`, written in key order.
    case dictionary([String: DBusValue])

    /// The D-Bus signature.
    public var signature: String {
        switch self {
        case .string: "s"
        case .bool: "b"
        case .double: "d"
        case .int64: "x"
        case .objectPath: "o"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }
}

/// What the player shows: the properties of org.mpris.MediaPlayer2 (`root`) and
/// org.mpris.MediaPlayer2.Player (`player`, without `Position`), and where the position is.
public struct MPRISProperties: Equatable, Sendable {
    public var root: [String: DBusValue]
    public var player: [String: DBusValue]
    /// The position (µs) when these properties were made; it moves on at `rate` while `moving`.
    public var positionUs: Int64
    public var moving: Bool
    /// The position stops here (the track's length; 0: no limit).
    public var lengthUs: Int64
    /// Counts jumps of the position (seeks, a track started again): a new value emits `Seeked`.
    public var seeks: Int

    public init(
        root: [String: DBusValue], player: [String: DBusValue], positionUs: Int64 = 0, moving: Bool = false,
        lengthUs: Int64 = 0, seeks: Int = 0
    ) {
        self.root = root
        self.player = player
        self.positionUs = positionUs
        self.moving = moving
        self.lengthUs = lengthUs
        self.seeks = seeks
    }

    /// The Player properties whose values differ from `old`'s, sorted.
    public func changedPlayerProperties(since old: MPRISProperties) -> [String] {
        Set(player.keys).union(old.player.keys).filter { player[$0] != old.player[$0] }.sorted()
    }
}

/// An MPRIS method call, or a write of the Volume property.
public enum MPRISCall: Hashable, Sendable {
    case playPause, play, pause, stop, next, previous, raise, quit
    case seek(offsetUs: Int64)
    case setPosition(trackPath: String, positionUs: Int64)
    case openURI(String)
    case setVolume(Double)

    init?(member: String, offsetUs: Int64, text: String, number: Double) {
        switch member {
        case "PlayPause": self = .playPause
        case "Play": self = .play
        case "Pause": self = .pause
        case "Stop": self = .stop
        case "Next": self = .next
        case "Previous": self = .previous
        case "Raise": self = .raise
        case "Quit": self = .quit
        case "Seek": self = .seek(offsetUs: offsetUs)
        case "SetPosition": self = .setPosition(trackPath: text, positionUs: offsetUs)
        case "OpenUri": self = .openURI(text)
        case "SetVolume": self = .setVolume(number)
        default: return nil
        }
    }
}

/// Why no MPRIS player could be offered.
public struct MPRISError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// An MPRIS 2 player on a D-Bus session bus (sd-bus), served on a thread of its own.
///
/// Threads: the bus thread alone touches the bus; it reads the properties under a lock (the
/// node's thread replaces them with ``update(_:)``) and hands each method call to `onCall`,
/// which must only hand off (the node pushes a `NodeInput` into its inbox).
public final class MPRISService: Sendable {
    /// The bus name taken (`org.mpris.MediaPlayer2.partyradio…`).
    public let busName: String
    private let state: Mutex<State>
    private let bus: BusHandle
    private let done = DispatchSemaphore(value: 0)

    struct State {
        var properties: MPRISProperties
        /// When `properties` came, on CLOCK_MONOTONIC.
        var updatedAtNs: Int64
        var stopping = false
    }

    /// Connects to the bus at `address` and starts serving; throws when the bus cannot be
    /// reached or the name not taken.
    public init(
        address: String, properties: MPRISProperties, onCall: @escaping @Sendable (MPRISCall) -> Void
    ) throws(MPRISError) {
        state = Mutex(State(properties: properties, updatedAtNs: Self.monotonicNs()))
        let context = Context(onCall: onCall)
        bus = BusHandle(context: context)
        var error: Int32 = 0
        var name = [CChar](repeating: 0, count: 160)
        let handle = prmpris_open(
            address, Unmanaged.passUnretained(context).toOpaque(), mprisGet, mprisCall, &name, name.count, &error)
        guard let handle else {
            throw MPRISError(
                description: "no MPRIS player: the session bus at \(address): \(String(cString: strerror(-error)))")
        }
        busName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        bus.handle = handle
        context.service = self
        let thread = Thread { [self] in serve() }
        thread.name = "partyradio.mpris"
        thread.start()
    }

    /// New properties (the node's thread): the bus thread announces what changed.
    public func update(_ properties: MPRISProperties) {
        let changed = state.withLock { state -> Bool in
            guard state.properties != properties else { return false }
            let position = properties.positionUs != state.properties.positionUs || properties.moving
            state.properties = properties
            if position { state.updatedAtNs = Self.monotonicNs() }
            return true
        }
        if changed, let handle = bus.handle { prmpris_wake(handle) }
    }

    /// Leaves the bus (and waits for the bus thread); idempotent.
    public func close() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first, let handle = bus.handle else { return }
        prmpris_wake(handle)
        done.wait()
    }

    deinit { close() }

    /// The position now (µs), moved on from the last update.
    public func positionUs() -> Int64 {
        state.withLock { state in Self.position(state.properties, elapsedNs: Self.monotonicNs() - state.updatedAtNs) }
    }

    /// Where `properties`' position is `elapsedNs` after they were made (pure).
    public static func position(_ properties: MPRISProperties, elapsedNs: Int64) -> Int64 {
        guard properties.moving else { return properties.positionUs }
        let moved = properties.positionUs + max(0, elapsedNs) / 1000
        return properties.lengthUs > 0 ? min(moved, properties.lengthUs) : moved
    }

    func properties() -> MPRISProperties { state.withLock { $0.properties } }

    private func serve() {
        guard let handle = bus.handle else {
            done.signal()
            return
        }
        var announced = properties()
        while !state.withLock({ $0.stopping }) {
            if prmpris_process(handle, 1000) < 0 { break }  // the bus went away: serve no more
            let now = properties()
            let changed = now.changedPlayerProperties(since: announced)
            if !changed.isEmpty {
                var names = changed.map { strdup($0) } + [nil]
                _ = prmpris_emit_player_changed(handle, &names)
                for name in names { free(name) }
            }
            if now.seeks != announced.seeks { _ = prmpris_emit_seeked(handle, positionUs()) }
            announced = now
        }
        prmpris_close(handle)
        bus.handle = nil
        done.signal()
    }

    /// CLOCK_MONOTONIC in nanoseconds.
    static func monotonicNs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Appends `value` to an sd-bus message (non-variadic calls only).
    static func append(_ value: DBusValue, to message: OpaquePointer?) -> Int32 {
        switch value {
        case .string(let text):
            return text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .objectPath(let path):
            return path.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
        case .bool(let flag):
            var number: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &number)
        case .double(let number):
            var number = number
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "d")), &number)
        case .int64(let number):
            var number = number
            return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &number)
        case .strings(let texts):
            var result = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s")
            for text in texts where result >= 0 { result = append(.string(text), to: message) }
            return result < 0 ? result : sd_bus_message_close_container(message)
        case .dictionary(let entries):
            var result = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}")
            for key in entries.keys.sorted() where result >= 0 {
                let entry = entries[key]!
                result = sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv")
                if result >= 0 { result = append(.string(key), to: message) }
                if result >= 0 {
                    result = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), entry.signature)
                }
                if result >= 0 { result = append(entry, to: message) }
                if result >= 0 { result = sd_bus_message_close_container(message) }
                if result >= 0 { result = sd_bus_message_close_container(message) }
            }
            return result < 0 ? result : sd_bus_message_close_container(message)
        }
    }
}

/// What the C callbacks reach through their opaque context.
private final class Context: @unchecked Sendable {
    // Set once, before the bus thread starts; read only on the bus thread after that.
    weak var service: MPRISService?
    let onCall: @Sendable (MPRISCall) -> Void
    init(onCall: @escaping @Sendable (MPRISCall) -> Void) { self.onCall = onCall }
}

/// The sd-bus connection. @unchecked Sendable: the handle is set before the bus thread starts and
/// used by that thread alone afterwards (``MPRISService/update(_:)`` only writes to its wake pipe).
private final class BusHandle: @unchecked Sendable {
    let context: Context
    var handle: OpaquePointer?
    init(context: Context) { self.context = context }
}

private func mprisGet(
    _ context: UnsafeMutableRawPointer?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?,
    _ reply: OpaquePointer?
) -> Int32 {
    guard let context, let interface, let property else { return -EINVAL }
    let box = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
    guard let service = box.service else { return -ESHUTDOWN }
    let name = String(cString: property)
    if name == "Position" { return MPRISService.append(.int64(service.positionUs()), to: reply) }
    let properties = service.properties()
    let values = String(cString: interface) == "org.mpris.MediaPlayer2" ? properties.root : properties.player
    guard let value = values[name] else { return -ENOENT }
    return MPRISService.append(value, to: reply)
}

private func mprisCall(
    _ context: UnsafeMutableRawPointer?, _ member: UnsafePointer<CChar>?, _ offsetUs: Int64,
    _ text: UnsafePointer<CChar>?, _ number: Double
) {
    guard let context, let member else { return }
    let box = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
    let call = MPRISCall(
        member: String(cString: member), offsetUs: offsetUs, text: text.map { String(cString: $0) } ?? "",
        number: number)
    if let call { box.onCall(call) }
}
