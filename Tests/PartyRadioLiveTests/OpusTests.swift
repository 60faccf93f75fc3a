import Foundation
import PartyRadioCore
import PartyRadioLive
import Testing

/// libopus round trip: a 1 kHz sine in, the same tone out (energy and zero crossings), and a
/// concealed frame of exactly its duration.
@Suite struct OpusTests {
    static func sine(frames: Int, samples: Int, hz: Double = 1000) -> [[Int16]] {
        (0..<frames).map { frame in
            (0..<samples).flatMap { index -> [Int16] in
                let t = Double(frame * samples + index) / 48_000
                let value = Int16(12_000 * sin(2 * Double.pi * hz * t))
                return [value, value]
            }
        }
    }

    @Test func aSineComesBackAsTheSameTone() throws {
        let encoder = try OpusEncoder(bitrate: 128_000, duration: .ms10)
        #expect(encoder.bitrate == 128_000 && !encoder.inbandFEC && encoder.samplesPerFrame == 480)
        let decoder = try OpusDecoder()
        var out: [Int16] = []
        for frame in Self.sine(frames: 50, samples: 480) {
            let packet = try encoder.encode(frame)
            #expect((1...LiveFrame.maxPayload).contains(packet.count))
            out += try decoder.decode(packet)
        }
        #expect(out.count == 50 * 480 * 2)
        let left = stride(from: 0, to: out.count, by: 2).map { Double(out[$0]) }.suffix(48 * 480 / 2 * 2)
        let rms = (left.map { $0 * $0 }.reduce(0, +) / Double(left.count)).squareRoot()
        // A sine of amplitude 12 000 has an RMS of 12 000 / √2 ≈ 8 485.
        #expect(abs(rms - 8485) < 850, "rms \(rms)")
        let crossings = zip(left, left.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        let seconds = Double(left.count) / 48_000
        // 1 kHz crosses zero 2 000 times a second.
        #expect(abs(Double(crossings) / seconds - 2000) < 40, "\(crossings) crossings in \(seconds) s")
    }

    /// libopus's output lags its input by the encoder's lookahead (312 samples, 6.5 ms at 48 kHz
    /// with application `audio`): a click captured at sample n is found at n + 312 in the decoded
    /// audio, by the detector the live LAN tests use on the frames they catch (the first sample of a
    /// run above 20,000), over the 440 Hz tone at 8,000 of their click track. A frame's stamp is its
    /// first captured sample, so a click found in decoded audio reads 6.5 ms after its own time.
    @Test func theDecodedAudioLagsByTheLookahead() throws {
        let encoder = try OpusEncoder(bitrate: 128_000, duration: .ms10)
        #expect(encoder.lookahead == 312)
        let decoder = try OpusDecoder()
        var decoded: [Int16] = []
        var clicks: [Int] = []
        for frame in 0..<200 {
            let pcm = (0..<480).flatMap { index -> [Int16] in
                let sample = frame * 480 + index
                // The click track's: a full-scale square burst every 500 ms, 5 ms long.
                let tone = Int16(8_000 * sin(2 * Double.pi * 440 * Double(sample) / 48_000))
                let value: Int16 = sample % 24_000 < 240 ? (sample / 24 % 2 == 0 ? 30_000 : -30_000) : tone
                return [value, value]
            }
            for sample in stride(from: 0, to: 480, by: 1) where (frame * 480 + sample) % 24_000 == 0 {
                clicks.append(frame * 480 + sample)
            }
            decoded += try decoder.decode(try encoder.encode(pcm))
        }
        var found: [Int] = []
        var inClick = false
        for (index, value) in decoded.enumerated() where index % 2 == 0 {
            let magnitude = abs(Int(value))
            if magnitude > 20_000 && !inClick { found.append(index / 2) }
            inClick = magnitude > 20_000 || (inClick && magnitude > 12_000)
        }
        let lags = zip(found, clicks).map { $0 - $1 }
        #expect(found.count == clicks.count, "\(found) for \(clicks)")
        // Within a few samples: the detector finds the first sample above 20,000, which the codec may
        // round a sample or two either way.
        #expect(lags.allSatisfy { abs($0 - 312) <= 3 }, "lags \(lags) samples")
    }

    @Test func aMissingFrameIsConcealedAtItsLength() throws {
        for duration in LiveFrameDuration.allCases {
            let encoder = try OpusEncoder(duration: duration)
            let decoder = try OpusDecoder()
            for frame in Self.sine(frames: 5, samples: encoder.samplesPerFrame) {
                _ = try decoder.decode(try encoder.encode(frame))
            }
            let concealed = try decoder.conceal(duration)
            #expect(concealed.count == duration.samples() * 2)
            #expect(concealed.contains { $0 != 0 }, "concealment continues the tone")
        }
    }

    @Test func aWrongFrameSizeIsAnError() throws {
        let encoder = try OpusEncoder()
        #expect(throws: OpusError.self) { try encoder.encode([Int16](repeating: 0, count: 10)) }
        #expect(throws: OpusError.self) { try OpusEncoder(bitrate: 1) }
    }
}
