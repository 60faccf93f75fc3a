/// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash, a pseudorandom function for
/// short inputs. The DJ uses it for the return cookies of unicast copies (``UnicastListeners``):
/// whoever does not know the key cannot make the cookie for an address it cannot read from.
/// It is the function libsodium calls `crypto_shorthash`; the adapter tests check the two agree.
/// Here, in the core, because the DJ's state machine that needs it does no I/O and links no C.
public enum SipHash24 {
    /// The 64-bit hash of `bytes` under the 128-bit key `(k0, k1)` (the key's two little-endian halves).
    public static func hash(k0: UInt64, k1: UInt64, _ bytes: [UInt8]) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = rotate(v1, 13) ^ v0
            v0 = rotate(v0, 32)
            v2 &+= v3
            v3 = rotate(v3, 16) ^ v2
            v0 &+= v3
            v3 = rotate(v3, 21) ^ v0
            v2 &+= v1
            v1 = rotate(v1, 17) ^ v2
            v2 = rotate(v2, 32)
        }
        func compress(_ m: UInt64) {
            v3 ^= m
            round()
            round()
            v0 ^= m
        }
        let whole = bytes.count / 8 * 8
        var index = 0
        while index < whole {
            compress(word(bytes, from: index, count: 8))
            index += 8
        }
        compress(word(bytes, from: whole, count: bytes.count - whole) | UInt64(truncatingIfNeeded: bytes.count) << 56)
        v2 ^= 0xff
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }

    private static func rotate(_ x: UInt64, _ by: UInt64) -> UInt64 { x << by | x >> (64 - by) }

    /// `count` (0–8) bytes from `from`, little-endian.
    private static func word(_ bytes: [UInt8], from: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for offset in 0..<count { value |= UInt64(bytes[from + offset]) << (8 * UInt64(offset)) }
        return value
    }
}
