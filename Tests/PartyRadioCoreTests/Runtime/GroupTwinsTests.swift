import Testing

@testable import PartyRadioCore

/// A dual-stack listener hears each group datagram over both families; the twin goes.
@Suite struct GroupTwinsTests {
    /// `admit` outside `#expect`, which cannot call a mutating method.
    func admit(_ twins: inout GroupTwins, _ bytes: [UInt8], family: AddressFamily, at now: LocalTime) -> Bool {
        twins.admit(bytes, family: family, at: now)
    }

    let t0 = LocalTime(ns: 1_000_000_000_000)

    @Test func theSecondCopyFromTheOtherFamilyIsDropped() {
        var twins = GroupTwins()
        #expect(admit(&twins, [1, 2, 3], family: .ipv4, at: t0))
        #expect(!admit(&twins, [1, 2, 3], family: .ipv6, at: t0 + 1_000_000))
        // Each datagram has one twin: a third copy is the replay filter's business.
        #expect(admit(&twins, [1, 2, 3], family: .ipv6, at: t0 + 2_000_000))
        // Either family may come first; other bytes are other datagrams.
        #expect(admit(&twins, [4], family: .ipv6, at: t0))
        #expect(admit(&twins, [5], family: .ipv4, at: t0))
        #expect(!admit(&twins, [4], family: .ipv4, at: t0 + 1))
    }

    @Test func aRepeatInTheSameFamilyIsNotATwin() {
        var twins = GroupTwins()
        #expect(admit(&twins, [7], family: .ipv4, at: t0))
        #expect(admit(&twins, [7], family: .ipv4, at: t0 + 1))
    }

    @Test func twinsAreMatchedOnlyWithinTheWindow() {
        var twins = GroupTwins()
        #expect(admit(&twins, [8], family: .ipv4, at: t0))
        #expect(admit(&twins, [8], family: .ipv6, at: t0 + GroupTwins.windowNs + 1))
    }

    @Test func memoryStaysBounded() {
        var twins = GroupTwins()
        for i in 0..<10_000 {
            #expect(admit(&twins, [UInt8(i & 255), UInt8(i >> 8)], family: .ipv4, at: t0 + Int64(i)))
        }
        #expect(twins.held <= GroupTwins.capacity)
        // The newest are still matched.
        #expect(!admit(&twins, [UInt8(9_999 & 255), UInt8(9_999 >> 8)], family: .ipv6, at: t0 + 10_000))
    }
}
