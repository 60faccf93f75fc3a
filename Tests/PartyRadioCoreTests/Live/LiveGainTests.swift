import Testing

@testable import PartyRadioCore

/// A live output's volume, restated: libmpv's curve (the level's cube), 0 silent, 100 untouched,
/// samples rounded and kept within 16 bits.
@Suite struct LiveGainTests {
    @Test("the level's cube: 100 → 1, 50 → 0.125, 20 → 0.008, 0 and below → 0, above 100 → 1")
    func curve() {
        #expect(LiveGain.factor(volume: 100) == 1)
        #expect(LiveGain.factor(volume: 50) == 0.125)
        #expect(abs(LiveGain.factor(volume: 20) - 0.008) < 1e-12)
        #expect(LiveGain.factor(volume: 0) == 0 && LiveGain.factor(volume: -5) == 0)
        #expect(LiveGain.factor(volume: 150) == 1)
    }

    @Test("applied to samples: unchanged at 1, silent at 0, scaled and rounded between")
    func samples() {
        let pcm: [Int16] = [.max, .min, 1000, -1000, 3, 0]
        #expect(LiveGain.apply(1, to: pcm) == pcm)
        #expect(LiveGain.apply(0, to: pcm) == [0, 0, 0, 0, 0, 0])
        #expect(LiveGain.apply(0.125, to: pcm) == [4096, -4096, 125, -125, 0, 0])
    }
}
