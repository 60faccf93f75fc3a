import Testing

@testable import PartyRadioLive

/// The live output's writes come in whole multiples of 6 samples (125 µs at 48 kHz), nothing lost,
/// doubled or reordered (WriteAligner: a null sink's clock rounds each piece down to the µs).
struct WriteAlignerTests {
    @Test func everyWriteIsWholeMicrosecondsAndTheSamplesComeOutInOrder() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var aligner = WriteAligner()
            var sent: [Int16] = []
            var written: [Int16] = []
            // In half the runs every write handed out is kept past the takes after it: a slice of the
            // aligner's buffer that a later take overwrote would change. (In the other half each is
            // let go at once, as the player does, and the buffer is reused in place.)
            let keep = Bool.random(using: &generator)
            var kept: [ArraySlice<Int16>] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                // Interleaved stereo: an even count, as the player's frames and silences are.
                let frames = Int.random(in: 0...600, using: &generator)
                let piece = (0..<frames * 2).map { _ in Int16.random(in: .min ... .max, using: &generator) }
                sent += piece
                let out = aligner.take(piece[...])
                // 6 samples a channel, 2 channels: 6 / 48,000 s = 125 µs exactly.
                #expect(out.count % 12 == 0)
                #expect((out.count / 2) * 1_000_000 % 48_000 == 0, "a write of \(out.count / 2) samples")
                written += out
                if keep { kept.append(out) }
                #expect(aligner.held.count < 12)
                #expect(aligner.heldNs == Int64(aligner.held.count / 2) * 1_000_000_000 / 48_000)
            }
            #expect(written + aligner.held == sent)
            if keep { #expect(Array(kept.joined()) == written) }
        }
    }
}
