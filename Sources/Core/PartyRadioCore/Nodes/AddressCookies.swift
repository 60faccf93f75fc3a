/// Cookies that prove a sender reads what is sent to its address: the DJ sends one to a key at the
/// address and port a datagram came from, and only whoever reads there can show it back. A forged
/// source address never gets its cookie, and the DJ keeps no state per cookie.
///
/// A cookie is SipHash-2-4 under a secret the DJ draws at each start, over the sender's key, the
/// address and port, and the ``epochNs`` epoch of the DJ's clock; the current epoch's and the last
/// one's are taken. Two uses, each with its own secret: the return cookies of unicast copies
/// (``UnicastListeners``) and the admission cookies of the verification budget (``SenderGate``).
public struct AddressCookies: Sendable, Equatable {
    /// How long a cookie's epoch lasts; a cookie is taken in its own epoch and the next.
    public static let epochNs = Nanos.seconds(30)

    private let secret: (k0: UInt64, k1: UInt64)

    /// - Parameter secret: the key, random unless a test sets it.
    public init(secret: (UInt64, UInt64)? = nil) {
        var random = SystemRandomNumberGenerator()
        self.secret = secret.map { (k0: $0.0, k1: $0.1) } ?? (k0: random.next(), k1: random.next())
    }

    public static func == (a: Self, b: Self) -> Bool { a.secret == b.secret }

    /// The cookie of `key` at `address` now.
    public func cookie(for key: PublicKey, at address: PeerAddress, now: LocalTime) -> UInt64 {
        cookie(for: key, at: address, epoch: Self.epoch(now))
    }

    /// Whether `cookie` is `key`'s at `address`, of this epoch or the last.
    public func isValid(_ cookie: UInt64, for key: PublicKey, at address: PeerAddress, now: LocalTime) -> Bool {
        let epoch = Self.epoch(now)
        return cookie == self.cookie(for: key, at: address, epoch: epoch)
            || cookie == self.cookie(for: key, at: address, epoch: epoch - 1)
    }

    private func cookie(for key: PublicKey, at address: PeerAddress, epoch: Int64) -> UInt64 {
        var bytes = key.bytes
        withUnsafeBytes(of: epoch.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: address.port.littleEndian) { bytes += $0 }
        bytes += Array(address.host.utf8)
        return SipHash24.hash(k0: secret.k0, k1: secret.k1, bytes)
    }

    private static func epoch(_ now: LocalTime) -> Int64 {
        now.ns >= 0 ? now.ns / epochNs : (now.ns + 1) / epochNs - 1
    }
}
