/// The fixed 52-byte header every datagram starts with (docs/PROTOCOL.md, "Header").
///
///     offset size field
///          0    2 magic "PR" (0x50 0x52)
///          2    1 version (1)
///          3    1 kind
///          4    8 station ID
///         12   32 sender public key (Ed25519)
///         44    8 sequence number
public struct MessageHeader: Equatable, Sendable {
    public static let magic: [UInt8] = [0x50, 0x52]
    public static let currentVersion: UInt8 = 1
    public static let size = 52

    public var version: UInt8
    public var kind: MessageKind
    public var stationID: StationID
    public var sender: PublicKey
    public var sequence: UInt64

    public init(
        version: UInt8 = MessageHeader.currentVersion, kind: MessageKind, stationID: StationID,
        sender: PublicKey, sequence: UInt64
    ) {
        self.version = version
        self.kind = kind
        self.stationID = stationID
        self.sender = sender
        self.sequence = sequence
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(bytes: Self.magic)
        writer.write(version)
        writer.write(kind.rawValue)
        writer.write(stationID.rawValue)
        writer.write(bytes: sender.bytes)
        writer.write(sequence)
    }

    /// Decodes the header; unknown versions and kinds are reported as such, so they can be counted.
    init(from reader: inout ByteReader) throws(WireError) {
        guard try reader.readBytes(2) == Self.magic else { throw .badMagic }
        version = try reader.readUInt8()
        guard version == Self.currentVersion else { throw .unknownVersion(version) }
        let rawKind = try reader.readUInt8()
        guard let kind = MessageKind(rawValue: rawKind) else { throw .unknownKind(rawKind) }
        self.kind = kind
        stationID = StationID(rawValue: try reader.read(UInt64.self))
        guard let sender = PublicKey(bytes: try reader.readBytes(PublicKey.byteCount)) else { throw .truncated }
        self.sender = sender
        sequence = try reader.read(UInt64.self)
    }
}
