/// Appends big-endian integers and length-prefixed strings to a byte array.
///
/// Network byte order throughout, as written in docs/PROTOCOL.md.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: UInt8) { bytes.append(value) }

    public mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(bytes other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    /// Writes a UTF-8 string with a one-byte length prefix, cut at a character boundary to `maxBytes`.
    public mutating func writeString(_ string: String, maxBytes: Int = 255) {
        let utf8 = Array(string.utf8Prefix(maxBytes: min(maxBytes, Int(UInt8.max))).utf8)
        write(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Writes a UTF-8 string with a two-byte length prefix, cut at a character boundary to `maxBytes`.
    ///
    /// The prefix is the length of the bytes written, which is less than `maxBytes` when the cut
    /// falls inside a multi-byte character.
    public mutating func writeLongString(_ string: String, maxBytes: Int = Int(UInt16.max)) {
        let utf8 = Array(string.utf8Prefix(maxBytes: min(maxBytes, Int(UInt16.max))).utf8)
        write(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

extension String {
    /// The longest prefix of whole characters whose UTF-8 form fits in `maxBytes`.
    public func utf8Prefix(maxBytes: Int) -> String {
        if utf8.count <= maxBytes { return self }
        var result = ""
        var used = 0
        for character in self {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            result.append(character)
            used += size
        }
        return result
    }
}
