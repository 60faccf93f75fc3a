import CSodium
import PartyRadioCore
import Testing

/// The core's SipHash-2-4 (the DJ's return cookies) is libsodium's `crypto_shorthash`, byte for
/// byte, on inputs of every length up to 100 and random keys.
@Suite struct SipHashTests {
    @Test func theCoresSipHashIsLibsodiumsShorthash() {
        #expect(sodium_init() >= 0)
        #expect(crypto_shorthash_bytes() == 8 && crypto_shorthash_keybytes() == 16)
        var random = SystemRandomNumberGenerator()
        for length in 0...100 {
            let k0: UInt64 = random.next()
            let k1: UInt64 = random.next()
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            var key = [UInt8](repeating: 0, count: 16)
            for index in 0..<8 {
                key[index] = UInt8(truncatingIfNeeded: k0 >> (8 * UInt64(index)))
                key[8 + index] = UInt8(truncatingIfNeeded: k1 >> (8 * UInt64(index)))
            }
            var out = [UInt8](repeating: 0, count: 8)
            #expect(crypto_shorthash(&out, message, UInt64(length), key) == 0)
            let theirs = out.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            #expect(SipHash24.hash(k0: k0, k1: k1, message) == theirs, "length \(length)")
        }
    }
}
