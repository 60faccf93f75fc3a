/// The fixed 52-byte header every datagram starts with (docs/PROTOCOL.md, "Header"), and the
/// admission cookie that may follow it.
///
///     offset size field
///          0    2 magic "PR" (0x50 0x52)
///          2    1 version (1)
///          3    1 kind (bits 0–5); bit 7: authenticated by a session MAC rather than a signature;
///                 bit 6: an admission cookie follows the header
///          4    8 station ID
///         12   32 sender public key (Ed25519)
///         44    8 sequence number
///        (52    8 admission cookie, with bit 6)
public struct MessageHeader: Equatable, Sendable {
    public static let magic: [UInt8] = [0x50, 0x52]
    public static let currentVersion: UInt8 = 1
    /// The fixed part; ``encodedSize`` adds the cookie.
    public static let size = 52
    public static let cookieSize = 8
    /// The kind byte's flag for ``Authentication/session``.
    static let sessionFlag: UInt8 = 0x80
    /// The kind byte's flag for an admission cookie after the header.
    static let cookieFlag: UInt8 = 0x40

    /// What ends the datagram and proves its sender.
    public enum Authentication: Sendable, Equatable {
        /// An Ed25519 signature by the sender key (64 bytes): every kind.
        case signature
        /// A MAC under the key the sender shares with the station (32 bytes, docs/PROTOCOL.md,
        /// "Session MAC"): a guest's vote to a DJ that advertises `mac=1`.
        case session
        /// Nothing: the DJ's cookie challenge, and only that (``MessageKind/isUnauthenticated``).
        case unsigned
    }

    public var version: UInt8
    public var kind: MessageKind
    public var authentication: Authentication
    public var stationID: StationID
    public var sender: PublicKey
    public var sequence: UInt64
    /// The admission cookie the DJ's challenge gave this sender at its address (``CookieChallenge``);
    /// only on kinds a guest sends (``MessageKind/takesCookie``).
    public var cookie: UInt64?

    public init(
        version: UInt8 = MessageHeader.currentVersion, kind: MessageKind, authentication: Authentication = .signature,
        stationID: StationID, sender: PublicKey, sequence: UInt64, cookie: UInt64? = nil
    ) {
        self.version = version
        self.kind = kind
        self.authentication = kind.isUnauthenticated ? .unsigned : authentication
        self.stationID = stationID
        self.sender = sender
        self.sequence = sequence
        self.cookie = kind.takesCookie ? cookie : nil
    }

    /// The header's size on the wire: the fixed part, and the cookie if there is one.
    public var encodedSize: Int { Self.size + (cookie == nil ? 0 : Self.cookieSize) }

    func encode(into writer: inout ByteWriter) {
        writer.write(bytes: Self.magic)
        writer.write(version)
        writer.write(
            kind.rawValue | (authentication == .session ? Self.sessionFlag : 0) | (cookie == nil ? 0 : Self.cookieFlag))
        writer.write(stationID.rawValue)
        writer.write(bytes: sender.bytes)
        writer.write(sequence)
        if let cookie { writer.write(cookie) }
    }

    /// Decodes the header; unknown versions and kinds are reported as such, so they can be counted.
    init(from reader: inout ByteReader) throws(WireError) {
        guard try reader.readBytes(2) == Self.magic else { throw .badMagic }
        version = try reader.readUInt8()
        guard version == Self.currentVersion else { throw .unknownVersion(version) }
        let rawKind = try reader.readUInt8()
        guard let kind = MessageKind(rawValue: rawKind & ~(Self.sessionFlag | Self.cookieFlag)) else {
            throw .unknownKind(rawKind)
        }
        self.kind = kind
        let hasMAC = rawKind & Self.sessionFlag != 0
        let hasCookie = rawKind & Self.cookieFlag != 0
        // Only a guest's vote may come with a session MAC, only a guest's kinds with a cookie, and
        // the cookie challenge with neither; any other combination is no kind this version knows.
        guard !hasMAC || kind.takesSessionMAC, !hasCookie || kind.takesCookie,
            !kind.isUnauthenticated || rawKind == kind.rawValue
        else { throw .unknownKind(rawKind) }
        authentication = kind.isUnauthenticated ? .unsigned : hasMAC ? .session : .signature
        stationID = StationID(rawValue: try reader.read(UInt64.self))
        guard let sender = PublicKey(bytes: try reader.readBytes(PublicKey.byteCount)) else { throw .truncated }
        self.sender = sender
        sequence = try reader.read(UInt64.self)
        cookie = hasCookie ? try reader.read(UInt64.self) : nil
    }
}
