/// The fixed 52-byte header every datagram starts with (docs/PROTOCOL.md, "Header").
///
///     offset size field
///          0    2 magic "PR" (0x50 0x52)
///          2    1 version (1)
///          3    1 kind (bit 7: authenticated by a session MAC rather than a signature)
///          4    8 station ID
///         12   32 sender public key (Ed25519)
///         44    8 sequence number
public struct MessageHeader: Equatable, Sendable {
    public static let magic: [UInt8] = [0x50, 0x52]
    public static let currentVersion: UInt8 = 1
    public static let size = 52
    /// The kind byte's flag for ``Authentication/session``.
    static let sessionFlag: UInt8 = 0x80

    /// What ends the datagram and proves its sender.
    public enum Authentication: Sendable, Equatable {
        /// An Ed25519 signature by the sender key (64 bytes): every kind.
        case signature
        /// A MAC under the key the sender shares with the station (32 bytes, docs/PROTOCOL.md,
        /// "Session MAC"): a guest's vote to a DJ that advertises `mac=1`.
        case session
    }

    public var version: UInt8
    public var kind: MessageKind
    public var authentication: Authentication
    public var stationID: StationID
    public var sender: PublicKey
    public var sequence: UInt64

    public init(
        version: UInt8 = MessageHeader.currentVersion, kind: MessageKind, authentication: Authentication = .signature,
        stationID: StationID, sender: PublicKey, sequence: UInt64
    ) {
        self.version = version
        self.kind = kind
        self.authentication = authentication
        self.stationID = stationID
        self.sender = sender
        self.sequence = sequence
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(bytes: Self.magic)
        writer.write(version)
        writer.write(kind.rawValue | (authentication == .session ? Self.sessionFlag : 0))
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
        guard let kind = MessageKind(rawValue: rawKind & ~Self.sessionFlag) else { throw .unknownKind(rawKind) }
        self.kind = kind
        authentication = rawKind & Self.sessionFlag == 0 ? .signature : .session
        // Only a guest's vote may come with a session MAC; any other kind with the flag is no
        // kind this version knows.
        guard authentication == .signature || kind.takesSessionMAC else { throw .unknownKind(rawKind) }
        stationID = StationID(rawValue: try reader.read(UInt64.self))
        guard let sender = PublicKey(bytes: try reader.readBytes(PublicKey.byteCount)) else { throw .truncated }
        self.sender = sender
        sequence = try reader.read(UInt64.self)
    }
}
