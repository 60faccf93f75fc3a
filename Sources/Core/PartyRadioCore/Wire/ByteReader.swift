/// Reads big-endian integers and length-prefixed strings from a byte slice, failing on truncation.
public struct ByteReader: Sendable {
    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    public var remaining: Int { bytes.count - offset }

    public mutating func readUInt8() throws(WireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func read<T: FixedWidthInteger>(_: T.Type) throws(WireError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw .truncated }
        var value: T = 0
        for index in offset..<(offset + size) { value = (value << 8) | T(truncatingIfNeeded: bytes[index]) }
        offset += size
        return value
    }

    public mutating func readBytes(_ count: Int) throws(WireError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// Reads a string written by ``ByteWriter/writeString(_:maxBytes:)`` with the same `maxBytes`:
    /// a longer one (which that writer never sends) or invalid UTF-8 is an error, so whatever
    /// decodes encodes to the same bytes again.
    public mutating func readString(maxBytes: Int = 255) throws(WireError) -> String {
        let length = Int(try readUInt8())
        guard length <= maxBytes else { throw .malformed("string of \(length) bytes, limit \(maxBytes)") }
        return try readUTF8(count: length)
    }

    /// Reads a string written by ``ByteWriter/writeLongString(_:maxBytes:)``; a length above
    /// `maxBytes` or invalid UTF-8 is an error.
    public mutating func readLongString(maxBytes: Int = Int(UInt16.max)) throws(WireError) -> String {
        let length = Int(try read(UInt16.self))
        guard length <= maxBytes else { throw .malformed("string of \(length) bytes, limit \(maxBytes)") }
        return try readUTF8(count: length)
    }

    private mutating func readUTF8(count: Int) throws(WireError) -> String {
        guard let string = String(validating: try readBytes(count), as: UTF8.self) else {
            throw .malformed("invalid UTF-8")
        }
        return string
    }
}
