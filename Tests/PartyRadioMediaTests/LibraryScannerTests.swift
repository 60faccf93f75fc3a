import CTagLibShim
import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioMedia

@Suite("LibraryScanner and DemoLibrary")
struct LibraryScannerTests {
    @Test("TagLib is loaded for a scan and unloaded after it")
    func tagLibUnloaded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        _ = try DemoLibrary.generate(into: directory.file("demo"), durationScale: 0.05)
        let before = prtag_users()
        #expect(LibraryScanner().scan([directory.path]).tracks.count == 6)
        #expect(prtag_users() == before)
        // Another test's scan may hold it right now; when none does, it must be gone from memory.
        if prtag_users() == 0 {
            let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
            #expect(!maps.contains("libtag_c.so"))
        }
    }

    @Test("scans the generated demo library, reads tags back, skips broken files with warnings")
    func scan() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let paths = try DemoLibrary.generate(into: directory.file("demo/nested"), durationScale: 0.1)
        #expect(paths.count == 6)
        // Noise: a corrupt FLAC, text posing as MP3, an unrelated file, a hidden file, an untagged WAV.
        var random = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) })
            .write(to: URL(fileURLWithPath: directory.file("corrupt.flac")))
        try Data("this is not audio\n".utf8).write(to: URL(fileURLWithPath: directory.file("fake.mp3")))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: directory.file("notes.txt")))
        let untagged = WAVWriter.pcm16(samples: [Int16](repeating: 0, count: 44_100), sampleRate: 22_050)
        try Data(untagged).write(to: URL(fileURLWithPath: directory.file("Untagged Jam.WAV")))
        try Data(untagged).write(to: URL(fileURLWithPath: directory.file(".hidden.wav")))

        let result = LibraryScanner().scan([directory.path])
        let specs = DemoTrackSpec.standard(durationScale: 0.1)
        #expect(result.tracks.count == 7)
        for spec in specs {
            let track = try #require(result.tracks.first { $0.path.hasSuffix(spec.fileName) })
            #expect(track.title == spec.info.title)
            #expect(track.artist == spec.info.artist)
            #expect(track.album == spec.info.album)
            // TagLib's C API reports whole seconds.
            #expect(abs(Int(track.durationMs) - spec.durationMs) < 1_000)
            #expect(track.id.hasPrefix("local:") && track.id.count == 22)
        }
        let plain = try #require(result.tracks.first { $0.path.hasSuffix("Untagged Jam.WAV") })
        #expect(plain.title == "Untagged Jam")
        #expect(plain.artist == "")
        #expect(plain.durationMs == 2_000)
        #expect(Set(result.warnings.map { ($0.path as NSString).lastPathComponent }) == ["corrupt.flac", "fake.mp3"])
        #expect(!result.tracks.contains { $0.path.contains("hidden") || $0.path.hasSuffix(".txt") })
        // IDs are stable across scans of unchanged files.
        #expect(LibraryScanner().scan([directory.path]).tracks.map(\.id) == result.tracks.map(\.id))
    }

    @Test("a missing directory is a warning, not a crash")
    func missing() {
        let result = LibraryScanner().scan(["/nonexistent/partyradio/music"])
        #expect(result.tracks.isEmpty)
        #expect(result.warnings.count == 1)
    }
}
