/// A whole datagram: header, body and the Ed25519 signature over both.
///
/// The codec is pure: signing and verification are done by the caller through ``Signer``
/// and the `signedBytes`/`signature` pair, so the core stays free of C and I/O.
public struct Datagram: Equatable, Sendable {
    public static let maxSize = 1200
    public static let signatureSize = 64

    public var header: MessageHeader
    public var message: Message
    /// The bytes the signature covers (header and body).
    public var signedBytes: [UInt8]
    public var signature: [UInt8]

    /// Decodes the structure of a datagram. The signature is *not* checked here.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Datagram {
        guard bytes.count <= maxSize else { throw .oversized(bytes.count) }
        var reader = ByteReader(bytes)
        let header = try MessageHeader(from: &reader)
        guard bytes.count >= MessageHeader.size + signatureSize else { throw .truncated }
        let bodyEnd = bytes.count - signatureSize
        var bodyReader = ByteReader(Array(bytes[..<bodyEnd]), offset: MessageHeader.size)
        let message = try Message.decode(kind: header.kind, from: &bodyReader)
        guard bodyReader.remaining == 0 else { throw .trailingBytes(bodyReader.remaining) }
        return Datagram(
            header: header, message: message, signedBytes: Array(bytes[..<bodyEnd]),
            signature: Array(bytes[bodyEnd...]))
    }

    /// Encodes and signs a message. Fails only if the result would exceed ``maxSize``,
    /// which the field limits rule out for every v1 message.
    public static func encode(
        _ message: Message, stationID: StationID, sequence: UInt64, signer: some Signer
    ) throws(WireError) -> [UInt8] {
        var writer = ByteWriter()
        MessageHeader(kind: message.kind, stationID: stationID, sender: signer.publicKey, sequence: sequence)
            .encode(into: &writer)
        message.body.encode(into: &writer)
        let signature = signer.sign(writer.bytes)
        writer.write(bytes: signature)
        guard writer.bytes.count <= maxSize else { throw .oversized(writer.bytes.count) }
        return writer.bytes
    }
}

/// Something holding a private key: signs datagrams as ``publicKey``.
public protocol Signer: Sendable {
    var publicKey: PublicKey { get }
    /// A 64-byte detached signature of `bytes`.
    func sign(_ bytes: [UInt8]) -> [UInt8]
}
