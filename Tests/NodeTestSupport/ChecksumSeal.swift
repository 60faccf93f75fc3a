import PartyRadioCore

/// A stand-in for a private station's AEAD, for the node unit tests and the simulated LAN: a
/// keystream and tag from FNV-1a under a secret. It hides nothing from a determined reader, but a
/// datagram opens only under the secret it was sealed with and any changed byte breaks it, through
/// the same seal, open and filter path as the runtime. Real AEAD is tested in the adapter tests.
public struct ChecksumSeal: StationSeal {
    public let secret: UInt64
    private static let nonceSize = SealedDatagram.nonceSize
    private static let tagSize = SealedDatagram.tagSize

    public init(secret: UInt64) { self.secret = secret }

    private static func bytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    private func stream(_ nonce: some Collection<UInt8>, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var block: UInt64 = 0
        while out.count < count {
            var hash = FNV1a64()
            hash.combine(Self.bytes(secret))
            hash.combine(Array(nonce))
            hash.combine(Self.bytes(block))
            let value = hash.value
            out += (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
            block += 1
        }
        return Array(out.prefix(count))
    }

    private func tag(_ body: [UInt8]) -> [UInt8] {
        var hash = FNV1a64()
        hash.combine(Self.bytes(secret ^ 0x5eed))
        hash.combine(body)
        let value = hash.value
        return (0..<Self.tagSize).map { UInt8(truncatingIfNeeded: value >> (($0 % 8) * 8)) ^ UInt8($0) }
    }

    private func sealBytes(_ plain: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let body = nonce + zip(plain, stream(nonce, count: plain.count)).map { $0 ^ $1 }
        return body + tag(body)
    }

    private func openBytes(_ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= Self.nonceSize + Self.tagSize else { return nil }
        let body = Array(sealed.dropLast(Self.tagSize))
        guard tag(body) == Array(sealed.suffix(Self.tagSize)) else { return nil }
        let nonce = body.prefix(Self.nonceSize)
        let cipher = body.dropFirst(Self.nonceSize)
        return zip(cipher, stream(nonce, count: cipher.count)).map { $0 ^ $1 }
    }

    /// The nonce is a hash of the plain bytes: deterministic, which the simulator wants.
    private func nonce(_ plain: [UInt8]) -> [UInt8] {
        var hash = FNV1a64()
        hash.combine(Self.bytes(secret &+ 1))
        hash.combine(plain)
        return stream(Self.bytes(hash.value), count: Self.nonceSize)
    }

    public func seal(datagram: [UInt8]) -> [UInt8] {
        SealedDatagram.marker + sealBytes(datagram, nonce: nonce(datagram))
    }

    public func open(datagram: [UInt8]) -> [UInt8]? {
        guard SealedDatagram.isSealed(datagram) else { return nil }
        return openBytes(Array(datagram.dropFirst(2)))
    }

    public func seal(txt: [String]) -> String {
        let plain = Array(txt.joined(separator: "\n").utf8)
        return Base64URL.encode(sealBytes(plain, nonce: nonce(plain)))
    }

    public func open(txt: String) -> [String]? {
        guard let bytes = Base64URL.decode(txt), let plain = openBytes(bytes),
            let text = String(validating: plain, as: UTF8.self)
        else { return nil }
        return text.split(separator: "\n").map(String.init)
    }
}
