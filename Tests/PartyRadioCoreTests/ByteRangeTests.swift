import PartyRadioCore
import Testing

@Suite("ByteRange, MediaKind, LibraryTrack")
struct ByteRangeTests {
    @Test(
        "Range header resolution",
        arguments: [
            (nil, ByteRange.full),
            ("bytes=0-99", .partial(start: 0, end: 99)),
            ("bytes=100-", .partial(start: 100, end: 999)),
            ("bytes=-100", .partial(start: 900, end: 999)),
            ("bytes=-5000", .partial(start: 0, end: 999)),
            ("bytes=990-5000", .partial(start: 990, end: 999)),
            ("Bytes = 5-5", .full),  // spaces around '=' are not the grammar
            ("BYTES=5-5", .partial(start: 5, end: 5)),
            ("bytes=1000-", .unsatisfiable),
            ("bytes=99999999999999999999999-", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=50-10", .full),
            ("bytes=0-1,5-6", .full),
            ("items=0-1", .full),
            ("bytes=a-b", .full),
            ("bytes=-", .full),
        ] as [(String?, ByteRange)])
    func resolve(header: String?, expected: ByteRange) {
        #expect(ByteRange.resolve(header: header, size: 1_000) == expected)
    }

    @Test("Content-Range values")
    func contentRange() {
        #expect(ByteRange.partial(start: 5, end: 9).contentRange(size: 10) == "bytes 5-9/10")
        #expect(ByteRange.unsatisfiable.contentRange(size: 10) == "bytes */10")
        #expect(ByteRange.resolve(header: "bytes=0-", size: 0) == .unsatisfiable)
    }

    @Test("media kinds by extension")
    func kinds() {
        #expect(MediaKind(fileName: "/a/b/Song.MP3") == .mp3)
        #expect(MediaKind(fileName: "x.opus")?.contentType == "audio/ogg; codecs=opus")
        #expect(MediaKind(fileName: "x.oga") == .ogg)
        #expect(MediaKind(fileName: "notes.txt") == nil)
        #expect(MediaKind(fileName: "dir.mp3/file") == nil)
        #expect(MediaKind(fileName: "noext") == nil)
        #expect(MediaKind.contentType(forFileName: "a.flac") == "audio/flac")
        #expect(MediaKind.contentType(forFileName: "a.bin") == "application/octet-stream")
    }

    @Test("stable library IDs")
    func ids() {
        let id = LibraryTrack.stableID(path: "/music/a.mp3", size: 1234, modifiedNs: 42)
        #expect(id.hasPrefix("local:") && id.count == 22)
        #expect(id == LibraryTrack.stableID(path: "/music/a.mp3", size: 1234, modifiedNs: 42))
        #expect(id != LibraryTrack.stableID(path: "/music/a.mp3", size: 1234, modifiedNs: 43))
        #expect(id != LibraryTrack.stableID(path: "/music/b.mp3", size: 1234, modifiedNs: 42))
        // FNV-1a is fixed: this value must never change, or every stored stat loses its track.
        #expect(LibraryTrack.stableID(path: "", size: 0, modifiedNs: 0) == "local:" + fnvReference())
    }

    /// FNV-1a-64 of one zero byte and sixteen more zero bytes, computed independently.
    func fnvReference() -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for _ in 0..<17 { hash = (hash ^ 0) &* 1_099_511_628_211 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
