import Testing

@testable import PartyRadioCore

/// Sequence numbers come from the real-time clock, so processes sharing a key interleave.
@Suite struct SequenceTests {
    @Test func sequencesFollowTheClockAndNeverRepeat() {
        #expect(Outbox.nextSequence(after: 0, realTimeNs: 1_000) == 1_000)
        // The clock stood still or went back: one more than the last.
        #expect(Outbox.nextSequence(after: 1_000, realTimeNs: 1_000) == 1_001)
        #expect(Outbox.nextSequence(after: 1_000, realTimeNs: 10) == 1_001)
        #expect(Outbox.nextSequence(after: 0, realTimeNs: -5) == 1)

        // Two processes with one key, sending in turn: a receiver's replay window accepts all.
        var window = ReplayWindow()
        let key = PublicKey(bytes: [UInt8](repeating: 3, count: 32))!
        var (a, b): (UInt64, UInt64) = (0, 0)
        var clock: Int64 = 1_700_000_000_000_000_000
        for turn in 0..<200 {
            clock += Int64(turn % 7) * 1_000 + 1
            if turn % 3 == 0 {
                b = Outbox.nextSequence(after: b, realTimeNs: clock)
                let accepted = window.accept(b, from: key)
                #expect(accepted)
            } else {
                a = Outbox.nextSequence(after: a, realTimeNs: clock)
                let accepted = window.accept(a, from: key)
                #expect(accepted)
            }
        }
        let replayed = window.accept(a, from: key)
        #expect(!replayed)
    }
}
