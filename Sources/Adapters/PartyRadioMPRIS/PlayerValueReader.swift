import CSystemd
import Foundation
import PartyRadioCore

/// Reads what another MPRIS player answers (a `Properties.GetAll` reply) into ``PlayerValue``s,
/// whatever signatures it sent: the types MPRIS uses become their cases, anything else (a nested
/// dictionary, a byte array, an array of variants, a file descriptor) is skipped and kept as
/// ``PlayerValue/other(signature:)``. Nothing in it is trusted: ``LivePlayerState/parse`` cleans it.
/// Text longer than ``maxStringBytes`` is cut there (every limit the parser keeps is below it), so a
/// player's huge string is never copied whole; at most ``maxEntries`` keys and ``maxStrings``
/// strings of a list are kept.
enum PlayerValueReader {
    static let maxStringBytes = 4096
    static let maxEntries = 256
    static let maxStrings = 64

    /// The properties of a GetAll reply (an `a{sv}` at the read position): the `Metadata`
    /// dictionary (empty when missing or not an `a{sv}`), `PlaybackStatus` and `Position`. Nil when
    /// the message is not what it says it is (sd-bus refuses to read on).
    static func playerProperties(_ message: OpaquePointer) -> (
        metadata: [String: PlayerValue], status: PlayerValue?, position: PlayerValue?
    )? {
        var metadata: [String: PlayerValue] = [:]
        var status: PlayerValue?
        var position: PlayerValue?
        let read = entries(message) { key, contents in
            if key == "Metadata" && contents == "a{sv}" {
                guard let dictionary = dictionary(message) else { return false }
                metadata = dictionary
                return true
            }
            guard let value = value(message, signature: contents) else { return false }
            if key == "PlaybackStatus" { status = value }
            if key == "Position" { position = value }
            return true
        }
        return read ? (metadata, status, position) : nil
    }

    /// An `a{sv}` at the read position, each value as ``value(_:signature:)`` reads it.
    static func dictionary(_ message: OpaquePointer) -> [String: PlayerValue]? {
        var result: [String: PlayerValue] = [:]
        let read = entries(message) { key, contents in
            guard let value = value(message, signature: contents) else { return false }
            if result.count < maxEntries && result[key] == nil { result[key] = value }
            return true
        }
        return read ? result : nil
    }

    /// Walks an `a{sv}`: for each entry, `body` gets its key and its variant's signature with the
    /// read position inside the variant, and reads (or skips) exactly that value; false stops.
    private static func entries(_ message: OpaquePointer, _ body: (String, String) -> Bool) -> Bool {
        guard sd_bus_message_enter_container(message, type("a"), "{sv}") > 0 else { return false }
        while true {
            let entered = sd_bus_message_enter_container(message, type("e"), "sv")
            if entered < 0 { return false }
            if entered == 0 { break }
            guard case .string(let key)? = value(message, signature: "s") else { return false }
            var kind: CChar = 0
            var contents: UnsafePointer<CChar>?
            guard sd_bus_message_peek_type(message, &kind, &contents) > 0, kind == type("v"), let contents,
                sd_bus_message_enter_container(message, type("v"), contents) > 0,
                body(key, String(cString: contents)),
                sd_bus_message_exit_container(message) >= 0,  // the variant
                sd_bus_message_exit_container(message) >= 0  // the entry
            else { return false }
        }
        return sd_bus_message_exit_container(message) >= 0
    }

    /// One value of type `signature` at the read position; nil when sd-bus cannot read it.
    static func value(_ message: OpaquePointer, signature: String) -> PlayerValue? {
        switch signature {
        case "s", "o":
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type(signature), &text) > 0, let text else { return nil }
            let shown = cut(text)
            return signature == "s" ? .string(shown) : .objectPath(shown)
        case "as":
            guard sd_bus_message_enter_container(message, type("a"), "s") > 0 else { return nil }
            var texts: [String] = []
            while true {
                var text: UnsafePointer<CChar>?
                let read = sd_bus_message_read_basic(message, type("s"), &text)
                if read < 0 { return nil }
                if read == 0 { break }
                if texts.count < maxStrings, let text { texts.append(cut(text)) }
            }
            return sd_bus_message_exit_container(message) >= 0 ? .strings(texts) : nil
        case "x": return basic(message, signature, Int64.self).map { .int64($0) }
        case "t": return basic(message, signature, UInt64.self).map { .uint64($0) }
        case "i": return basic(message, signature, Int32.self).map { .int32($0) }
        case "u": return basic(message, signature, UInt32.self).map { .uint32($0) }
        case "n": return basic(message, signature, Int16.self).map { .int32(Int32($0)) }
        case "q": return basic(message, signature, UInt16.self).map { .uint32(UInt32($0)) }
        case "d": return basic(message, signature, Double.self).map { .double($0) }
        case "b": return basic(message, signature, Int32.self).map { .bool($0 != 0) }
        default:
            guard sd_bus_message_skip(message, signature) >= 0 else { return nil }
            return .other(signature: String(signature.prefix(64)))
        }
    }

    private static func basic<T>(_ message: OpaquePointer, _ signature: String, _: T.Type) -> T? {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { pointer.deallocate() }
        return sd_bus_message_read_basic(message, type(signature), pointer) > 0 ? pointer.pointee : nil
    }

    /// At most ``maxStringBytes`` of a C string (sd-bus checked it is UTF-8; a cut character is
    /// replaced, and only ever in text longer than any the parser keeps).
    private static func cut(_ text: UnsafePointer<CChar>) -> String {
        let length = strnlen(text, maxStringBytes)
        return text.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private static func type(_ signature: String) -> CChar { CChar(bitPattern: signature.utf8.first ?? 0) }
}
