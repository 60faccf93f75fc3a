import Testing

@testable import PartyRadioCore

/// The next tracks' sources (kind 21) and the URL rules they keep: every source is untrusted.
@Suite struct NextSourcesTests {
    let station = StationID(rawValue: 0x0123_4567_89AB_CDEF)

    static let accepted = [
        "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview115/v4/6b/e1/5f/mzaf_1.plus.aac.p.m4a",
        "http://10.0.0.1:8080/media/0123abcd_-",
        "http://127.0.0.1:35111/itunes-assets/AudioPreview/1.plus.aac.p.m4a",
        "http://[fd99::1]:8080/media/x",
        "http://[fe80::1%25eth0]:8080/media/x",
        "https://a",
        "https://example.com?x=1&y=%20z",
        "https://example.com:65535/a;b=c/~d(e)!*'+,$@",
    ]

    static let refused = [
        "", "ftp://example.com/a.m4a", "file:///etc/passwd", "javascript:alert(1)", "HTTPS://example.com/a",
        "http://", "http:///a", "https://user:pw@example.com/a", "https://@example.com/a",
        "https://example.com/a b", "https://example.com/a\r\nX-Evil: 1", "https://example.com/a\u{0}b",
        "https://example.com/é.m4a", "https://exämple.com/a", "https://example.com/a#frag",
        "https://example.com:0/a", "https://example.com:65536/a", "https://example.com:/a", "https://example.com:80a/",
        "https://[::1/a", "https://[zz::1]/a", "https://[fe80::1%eth0]/a", "https://[fe80::1%25]/a",
        "https://[fe80::1]x/a", "https://exa_mple.com/a", "https://example.com/<script>",
        "https://example.com/" + String(repeating: "a", count: 381),
    ]

    @Test func sourcesOfTheShapesTheDesignUsesAreFetchable() {
        for url in Self.accepted { #expect(MediaSource.isFetchable(url), "\(url)") }
        #expect(MediaSource.isFetchable("https://example.com/" + String(repeating: "a", count: 380)))  // 400 bytes
    }

    @Test func anythingElseIsNot() {
        for url in Self.refused { #expect(!MediaSource.isFetchable(url), "\(url.debugDescription)") }
    }

    /// A datagram of kind 21 with `body` as it is.
    func datagram(body: [UInt8]) throws -> [UInt8] {
        let bytes = try Datagram.encode(
            .nextSources(NextSources(entries: [])), stationID: station, sequence: 1, signer: FakeSigner(3))
        return Array(bytes.prefix(MessageHeader.size)) + body + Array(bytes.suffix(Datagram.signatureSize))
    }

    func entry(_ id: String, _ source: String) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt8(id.utf8.count))
        writer.write(bytes: id.utf8)
        writer.write(UInt16(source.utf8.count))
        writer.write(bytes: source.utf8)
        return writer.bytes
    }

    @Test func wellFormedBodiesDecode() throws {
        let body = [UInt8(2)] + entry("1", Self.accepted[0]) + entry("local:x", Self.accepted[1])
        guard case .nextSources(let sources) = try Datagram.decode(datagram(body: body)).message else {
            Issue.record("not next sources")
            return
        }
        #expect(sources.entries.map(\.trackID) == ["1", "local:x"])
        #expect(sources.source(of: "local:x") == Self.accepted[1])
        #expect(try Datagram.decode(datagram(body: [0])).message == .nextSources(NextSources(entries: [])))
    }

    @Test func malformedBodiesAreRefusedAsMalformed() throws {
        let good = entry("1", Self.accepted[0])
        var bodies: [(String, [UInt8])] = [
            ("three entries", [3] + good + good + good),
            ("a count of 255", [255] + good),
            ("an empty track ID", [1] + entry("", Self.accepted[0])),
            ("a track ID over 64 bytes", [1] + entry(String(repeating: "1", count: 65), Self.accepted[0])),
            ("a source over 400 bytes", [1] + entry("1", "https://example.com/" + String(repeating: "a", count: 381))),
            ("invalid UTF-8", [1, 1, 0xFF, 0, 9] + Array("https://a".utf8)),
        ]
        for url in Self.refused where url.utf8.count <= 400 {
            bodies.append(("source \(url.debugDescription)", [1] + entry("1", url)))
        }
        for (what, body) in bodies {
            let bytes = try datagram(body: body)
            #expect(bytes.count <= Datagram.maxSize)
            #expect(throws: WireError.self, "\(what)") { try Datagram.decode(bytes) }
            #expect((try? Datagram.decode(bytes)) == nil)
            if let error = Self.error(decoding: bytes) {
                #expect(error.counterName == "malformed", "\(what): \(error)")
            }
        }
        // Trailing bytes after a well-formed body.
        #expect(throws: WireError.self) { try Datagram.decode(datagram(body: [1] + good + [0])) }
    }

    static func error(decoding bytes: [UInt8]) -> WireError? {
        do {
            _ = try Datagram.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func theSenderCarriesOnlyWhatTheWireAllowsAndNeverCutsIt() throws {
        let tracks = [
            Track(id: "1", title: "", artist: "", album: "", durationMs: 1, source: "file:///etc/passwd"),
            Track(
                id: String(repeating: "9", count: 65), title: "", artist: "", album: "", durationMs: 1,
                source: "https://a/1"),
            Track(id: "2", title: "", artist: "", album: "", durationMs: 1, source: "https://a/2"),
        ]
        // Only the first two tracks play next; neither can go, so nothing goes (the third plays later).
        #expect(NextSources(tracks: tracks).entries.isEmpty)
        let fine = NextSources(tracks: tracks.suffix(1) + tracks.prefix(1))
        #expect(fine.entries == [.init(trackID: "2", source: "https://a/2")])
        // Entries made by hand that the wire cannot carry are left out, so encode and decode agree.
        let mixed = NextSources(entries: [
            .init(trackID: "x", source: "https://a/x y"), .init(trackID: "3", source: "https://a/3"),
            .init(trackID: "4", source: "https://a/4"), .init(trackID: "5", source: "https://a/5"),
        ])
        let bytes = try Datagram.encode(.nextSources(mixed), stationID: station, sequence: 1, signer: FakeSigner(3))
        #expect(
            try Datagram.decode(bytes).message
                == .nextSources(
                    NextSources(entries: [
                        .init(trackID: "3", source: "https://a/3"), .init(trackID: "4", source: "https://a/4"),
                    ])))
        // Two entries at every limit fit one datagram.
        let longest = "https://example.com/" + String(repeating: "a", count: 380)
        let full = NextSources(
            entries: (0..<2).map { .init(trackID: String(repeating: "\($0)", count: 64), source: longest) })
        let fullBytes = try Datagram.encode(.nextSources(full), stationID: station, sequence: 1, signer: FakeSigner(3))
        #expect(fullBytes.count <= Datagram.maxSize)
        #expect(try Datagram.decode(fullBytes).message == .nextSources(full))
    }

    @Test func kind21IsTheDJs() {
        #expect(MessageKind(rawValue: 21) == .nextSources)
        #expect(MessageKind.nextSources.isFromDJ)
    }
}
