/// A whole datagram: header, body and the Ed25519 signature over both (or, for a guest's vote
/// to a DJ that takes them, a session MAC; for the DJ's cookie challenge, nothing:
/// ``MessageHeader/Authentication``).
///
/// The codec is pure: signing and verification are done by the caller through ``Signer``
/// and the `signedBytes`/`signature` pair, so the core stays free of C and I/O.
public struct Datagram: Equatable, Sendable {
    public static let maxSize = 1200
    public static let signatureSize = 64
    public static let sessionMACSize = 32

    public var header: MessageHeader
    public var message: Message
    /// The bytes the signature covers (header, cookie and body).
    public var signedBytes: [UInt8]
    /// The signature, or the session MAC (``MessageHeader/authentication`` says which).
    public var signature: [UInt8]

    /// The size of what ends a datagram authenticated as `authentication`.
    public static func trailerSize(_ authentication: MessageHeader.Authentication) -> Int {
        switch authentication {
        case .signature: signatureSize
        case .session: sessionMACSize
        case .unsigned: 0
        }
    }

    /// Decodes the structure of a datagram. The signature (or MAC) is *not* checked here.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Datagram {
        guard bytes.count <= maxSize else { throw .oversized(bytes.count) }
        var reader = ByteReader(bytes)
        let header = try MessageHeader(from: &reader)
        let trailer = trailerSize(header.authentication)
        guard bytes.count >= header.encodedSize + trailer else { throw .truncated }
        let bodyEnd = bytes.count - trailer
        var bodyReader = ByteReader(Array(bytes[..<bodyEnd]), offset: header.encodedSize)
        let message = try Message.decode(kind: header.kind, from: &bodyReader)
        guard bodyReader.remaining == 0 else { throw .trailingBytes(bodyReader.remaining) }
        return Datagram(
            header: header, message: message, signedBytes: Array(bytes[..<bodyEnd]),
            signature: Array(bytes[bodyEnd...]))
    }

    /// Encodes and signs a message (a cookie challenge goes unsigned), with the admission cookie
    /// after the header if one is given and the kind takes it. Fails only if the result would
    /// exceed ``maxSize``, which the field limits rule out for every v1 message.
    public static func encode(
        _ message: Message, stationID: StationID, sequence: UInt64, signer: some Signer, cookie: UInt64? = nil
    ) throws(WireError) -> [UInt8] {
        var writer = ByteWriter()
        MessageHeader(
            kind: message.kind, stationID: stationID, sender: signer.publicKey, sequence: sequence, cookie: cookie
        ).encode(into: &writer)
        message.body.encode(into: &writer)
        if !message.kind.isUnauthenticated { writer.write(bytes: signer.sign(writer.bytes)) }
        guard writer.bytes.count <= maxSize else { throw .oversized(writer.bytes.count) }
        return writer.bytes
    }

    /// Encodes a message and ends it with its session MAC (a guest's vote to a DJ that takes
    /// them); a kind that takes no MAC is signed by `fallback` instead.
    public static func encode(
        _ message: Message, stationID: StationID, sequence: UInt64, session: some SessionSigner,
        fallback: some Signer, cookie: UInt64? = nil
    ) throws(WireError) -> [UInt8] {
        guard message.kind.takesSessionMAC, session.publicKey == fallback.publicKey else {
            return try encode(message, stationID: stationID, sequence: sequence, signer: fallback, cookie: cookie)
        }
        var writer = ByteWriter()
        MessageHeader(
            kind: message.kind, authentication: .session, stationID: stationID, sender: session.publicKey,
            sequence: sequence, cookie: cookie
        ).encode(into: &writer)
        message.body.encode(into: &writer)
        let mac = session.mac(writer.bytes)
        writer.write(bytes: mac)
        guard writer.bytes.count <= maxSize else { throw .oversized(writer.bytes.count) }
        return writer.bytes
    }
}

/// The key a guest and a station share (X25519 of the guest's key and the station's, hashed:
/// docs/PROTOCOL.md, "Session MAC"), for the MACs that stand in for signatures on votes. Made by
/// the security adapter; opaque to the core.
public struct SessionKey: Sendable, Equatable {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }
}

/// Something holding a session key: ends datagrams from ``publicKey`` with their MAC.
public protocol SessionSigner: Sendable {
    var publicKey: PublicKey { get }
    /// The 32-byte MAC of `bytes` under the session key.
    func mac(_ bytes: [UInt8]) -> [UInt8]
}

/// Something holding a private key: signs datagrams as ``publicKey``.
public protocol Signer: Sendable {
    var publicKey: PublicKey { get }
    /// A 64-byte detached signature of `bytes`.
    func sign(_ bytes: [UInt8]) -> [UInt8]
}
