import Foundation
import PartyRadioLive
import Testing

/// speexdsp at the drift controller's ratios: the number of samples out is the input's times the
/// ratio (nothing dropped or repeated), and a tone stays whole across ratio changes (no step).
@Suite struct SpeexResamplerTests {
    static func tone(_ frames: Int, from start: Int = 0) -> [Int16] {
        (start..<start + frames).flatMap { index -> [Int16] in
            let value = Int16(10_000 * sin(2 * Double.pi * 440 * Double(index) / 48_000))
            return [value, value]
        }
    }

    /// The player takes a frame's first sample to be heard `delaySamples` after what it wrote
    /// before the frame, from the very first frame (it places the output so): an impulse at a new
    /// resampler's first input sample comes out at output sample `delaySamples`.
    @Test func theFirstSampleComesOutAfterTheFiltersDelay() throws {
        let resampler = try SpeexResampler()
        var input = [Int16](repeating: 0, count: 960 * 2)
        input[0] = 20_000
        input[1] = 20_000
        let output = resampler.process(input) + resampler.process([Int16](repeating: 0, count: 960 * 2))
        let left = stride(from: 0, to: output.count, by: 2).map { abs(Int(output[$0])) }
        let peak = left.indices.max { left[$0] < left[$1] } ?? -1
        #expect(resampler.delaySamples > 0)
        #expect(abs(peak - resampler.delaySamples) <= 1, "the impulse at \(peak), the delay \(resampler.delaySamples)")
    }

    @Test func samplesOutFollowTheRatio() throws {
        for ppm in [-1000.0, -200, 0, 200, 1000] {
            let resampler = try SpeexResampler()
            resampler.setRatio(1 + ppm / 1e6)
            var out = 0
            for block in 0..<500 { out += resampler.process(Self.tone(480, from: block * 480)).count / 2 }
            // 240 000 in: ±ppm of it out (the filter's delay of silence first, as much of the input kept).
            let expected = 240_000 * (1 + ppm / 1e6)
            #expect(abs(Double(out) - expected) <= 4, "\(ppm) ppm: \(out) out")
        }
    }

    /// A ratio changed while the resampler runs reaches its output, as the player changes it every
    /// frame: the samples out are the sum of each block's times its ratio (the ratio ramps by 3 ppm a
    /// block to 600 ppm, as the controller may, then holds). speexdsp refused such changes once (its
    /// fractional position overflowed on the way to the new denominator), and the output stayed at 1.
    @Test func aRatioChangedWhileRunningReachesTheOutput() throws {
        let resampler = try SpeexResampler()
        var out = 0
        var expected = 0.0
        for block in 0..<400 {
            let ratio = 1 + Double(min(block, 200)) * 3 / 1e6
            resampler.setRatio(ratio)
            out += resampler.process(Self.tone(480, from: block * 480)).count / 2
            expected += 480 * ratio
            #expect(abs(resampler.ratio - ratio) < 16e-6, "block \(block): ratio \(resampler.ratio), not \(ratio)")
        }
        // 192 000 in, 86 more out at the ramp's ratios; the steps of 15 ppm round each block's ratio
        // by up to 7.6 ppm, about 1.5 samples over the 400 blocks.
        #expect(abs(Double(out) - expected) <= 4, "\(out) out, \(expected) expected")
    }

    @Test func aToneStaysWholeAcrossRatioChanges() throws {
        let resampler = try SpeexResampler()
        var out: [Int16] = []
        for block in 0..<300 {
            // The controller's ratio moves by at most 2 ppm a 10 ms frame; here 20 ppm, up and down.
            resampler.setRatio(1 + Double((block % 100) - 50) * 20 / 1e6)
            out += resampler.process(Self.tone(480, from: block * 480))
        }
        let left = stride(from: 200, to: out.count, by: 2).map { Double(out[$0]) }
        // A 440 Hz sine of amplitude 10 000 moves at most 2π·440·10 000 / 48 000 ≈ 576 a sample.
        let jump = zip(left, left.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        let at = zip(left, left.dropFirst()).enumerated().filter { abs($0.element.1 - $0.element.0) > 620 }.map {
            ($0.offset + 100) / 480
        }
        #expect(jump < 620, "largest step between samples \(jump) in blocks \(Set(at).sorted())")
    }
}
