import Testing

@testable import PartyRadioCore

@Suite("WAVWriter and demo tones")
struct WAVWriterTests {
    func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    @Test("RIFF layout with fmt, LIST/INFO and data chunks")
    func layout() {
        let bytes = WAVWriter.pcm16(
            samples: [0, 1, -1], sampleRate: 22_050,
            info: .init(title: "Odd", artist: "Ab", album: nil))
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8))
        #expect(Int(le32(bytes, 4)) == bytes.count - 8)
        #expect(Array(bytes[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(le32(bytes, 16) == 16)
        #expect(le32(bytes, 24) == 22_050)
        // LIST chunk: "INFO", INAM "Odd\0" (4), IART "Ab\0" (3 + pad).
        #expect(Array(bytes[36..<40]) == Array("LIST".utf8))
        #expect(le32(bytes, 40) == 4 + 8 + 4 + 8 + 4)
        #expect(Array(bytes[44..<52]) == Array("INFOINAM".utf8))
        #expect(Array(bytes[56..<60]) == Array("Odd\0".utf8))
        #expect(Array(bytes[60..<64]) == Array("IART".utf8))
        #expect(le32(bytes, 64) == 3)
        #expect(bytes[71] == 0)  // pad byte
        #expect(Array(bytes[72..<76]) == Array("data".utf8))
        #expect(le32(bytes, 76) == 6)
        #expect(Array(bytes[80..<86]) == [0, 0, 1, 0, 0xFF, 0xFF])
        // Then the ID3v2.4 tag: header, TIT2 "Odd" (1 + 3 bytes), TPE1 "Ab" (1 + 2 bytes).
        #expect(Array(bytes[86..<90]) == Array("id3 ".utf8))
        #expect(le32(bytes, 90) == 10 + 14 + 13)
        #expect(Array(bytes[94..<104]) == Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 27])
        #expect(Array(bytes[104..<118]) == Array("TIT2".utf8) + [0, 0, 0, 4, 0, 0, 3] + Array("Odd".utf8))
        #expect(Array(bytes[118..<131]) == Array("TPE1".utf8) + [0, 0, 0, 3, 0, 0, 3] + Array("Ab".utf8))
        #expect(bytes.count == 132)  // odd-sized id3 chunk padded
    }

    @Test("melodies render the requested length without clipping")
    func melody() {
        let samples = ToneMelody(notes: [0, nil, 12], noteMs: 100).render(durationMs: 1_000, sampleRate: 8_000)
        #expect(samples.count == 8_000)
        let peak = samples.map { Int($0).magnitude }.max()!
        #expect(peak > 9_000 && peak <= 9_831)
        #expect(samples[800..<1600].allSatisfy { $0 == 0 })  // the rest
        #expect(ToneMelody.power2(1.5) > 2.828 && ToneMelody.power2(1.5) < 2.829)
        #expect(ToneMelody.power2(-2) == 0.25)
    }

    @Test("the standard demo library: six tagged tracks of 20–40 s")
    func demo() {
        let specs = DemoTrackSpec.standard()
        #expect(specs.count == 6)
        #expect(specs.allSatisfy { (20_000...40_000).contains($0.durationMs) })
        #expect(Set(specs.map(\.fileName)).count == 6)
        #expect(specs[0].fileName == "01 Sunrise Scale.wav")
        let short = DemoTrackSpec.standard(durationScale: 0.05)
        #expect(short[0].wavBytes().count > 22_050 * 2)
    }
}
