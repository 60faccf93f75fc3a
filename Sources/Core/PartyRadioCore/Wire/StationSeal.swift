/// The secret of a private station, as the core uses it: seals and opens whole datagrams and the
/// TXT record. The core stays free of C: the runtime passes libsodium's XChaCha20-Poly1305 under
/// keys derived from the join code (`CodeSeal`), the tests a stand-in.
public protocol StationSeal: Sendable {
    /// `datagram` (already signed) sealed whole: ``SealedDatagram/marker``, nonce, ciphertext, tag.
    func seal(datagram: [UInt8]) -> [UInt8]
    /// The inner datagram; nil when it was not sealed under this key, or was altered.
    func open(datagram: [UInt8]) -> [UInt8]?
    /// The value of the `seal` TXT key: the advert's own TXT strings, sealed.
    func seal(txt: [String]) -> String
    /// The advert's TXT strings; nil when the blob does not open under this key.
    func open(txt: String) -> [String]?
}

/// How a sealed datagram looks on the wire, before anyone opens it.
///
/// `0x50 0x53` ("PS") ‖ 24-byte random nonce ‖ ciphertext of the inner datagram ‖ 16-byte tag.
/// The marker is the clear datagram's magic with its second byte changed, so a receiver tells the
/// two apart from the first two bytes, and an old receiver counts a sealed one as `bad_magic`.
public enum SealedDatagram {
    public static let marker: [UInt8] = [0x50, 0x53]
    public static let nonceSize = 24
    public static let tagSize = 16
    public static let overhead = marker.count + nonceSize + tagSize
    /// A sealed datagram may be this long: the inner one keeps its own 1200-byte limit.
    public static let maxSize = Datagram.maxSize + overhead

    /// Whether `bytes` claim to be sealed (nothing is checked but the marker).
    public static func isSealed(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == marker[0] && bytes[1] == marker[1]
    }
}
