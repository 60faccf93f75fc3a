import Testing

@testable import PartyRadioCore

@Suite struct FNV1a64Tests {
    /// Reference values from the FNV authors' test suite (Landon Curt Noll's fnv_test.c).
    @Test func matchesTheReferenceVectors() {
        #expect(FNV1a64.hash([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a64.hash("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(FNV1a64.hash("foobar".utf8) == 0x8594_4171_f739_67e8)
    }

    @Test func piecesHashLikeTheWhole() {
        var hasher = FNV1a64()
        hasher.combine("foo".utf8)
        hasher.combine("bar".utf8)
        #expect(hasher.value == FNV1a64.hash("foobar".utf8))
        #expect(FNV1a64().value == FNV1a64.offsetBasis)
    }
}
