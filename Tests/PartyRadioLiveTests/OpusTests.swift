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
