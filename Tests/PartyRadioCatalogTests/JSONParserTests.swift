import CatalogTestSupport
import Testing

@testable import PartyRadioCatalog

@Suite struct JSONParserTests {
    @Test func parsesEveryKind() throws {
        let value = try JSONParser.parse(#" {"a":[1,-2.5e3,true,false,null,"x\u00e9\ud83c\udfb5\n"],"b":{}} "#)
        #expect(value["a"]?.array?.count == 6)
        #expect(value["a"]?.array?[0] == .number("1"))
        #expect(value["a"]?.array?[1] == .number("-2.5e3"))
        #expect(value["a"]?.array?[5] == .string("xé🎵\n"))
        #expect(value["b"] == .object([:]))
    }

    @Test func identifiersFromNumbersAndStrings() throws {
        #expect(JSONValue.number("1440806061").identifier == "1440806061")
        #expect(JSONValue.number("1440806000.0").identifier == "1440806000")
        #expect(JSONValue.number("12345678901234567890").identifier == "12345678901234567890")
        #expect(JSONValue.string(" 42 ").identifier == "42")
        #expect(JSONValue.string("").identifier == nil)
        #expect(JSONValue.bool(true).identifier == nil)
        #expect(JSONValue.string("215000").integer == 215_000)
        #expect(JSONValue.number("2.5e2").integer == 250)
        #expect(JSONValue.string("abc").integer == nil)
    }

    @Test func rejectsMalformed() {
        for text in [
            "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "-", "\"\\x\"", "\"a\u{01}\"", "[1] 2", "nul",
            "{\"a\":1,}", "\"\\u12G4\"",
        ] {
            #expect(throws: JSONParseError.self, "\(text)") { try JSONParser.parse(text) }
        }
        #expect((try? JSONParser.parse("\"\\ud800\"")) == .string("\u{FFFD}"))  // lone surrogate
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let objects = String(repeating: "{\"a\":", count: 50_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(objects) }
    }
}

/// Decoders meet random bytes, every truncation and random corruption of real fixtures: they
/// must return a page or a CatalogError, never trap.
@Suite struct DecoderFuzzTests {
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func decodeAll(_ bytes: [UInt8]) {
        _ = try? ITunesDecoder.decode(bytes)
        _ = try? ChartFeedDecoder.decode(bytes)
        _ = try? AppleMusicDecoder.decode(bytes)
    }

    @Test func randomBytes() {
        var random = SplitMix(state: 0xC0FFEE)
        let alphabet = Array("{}[]\":,0123456789.eE+-truefalsnl \\u\"abc".utf8)
        for round in 0..<3000 {
            let count = Int.random(in: 0...200, using: &random)
            let bytes: [UInt8] = (0..<count).map { _ in
                round % 2 == 0 ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!
            }
            Self.decodeAll(bytes)
        }
    }

    @Test(arguments: [
        "search-daft-punk.json", "search-unicode.json", "lookup-tracks.json", "topsongs-us.json",
        "applemusic-search.json",
    ])
    func everyTruncationOfAFixture(_ name: String) throws {
        let bytes = try FixtureServer.fixture(name)
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 700)) {
            Self.decodeAll(Array(bytes.prefix(length)))
        }
    }

    @Test(arguments: ["search-daft-punk.json", "topsongs-us.json", "applemusic-search.json"])
    func randomCorruptionOfAFixture(_ name: String) throws {
        let original = try FixtureServer.fixture(name)
        var random = SplitMix(state: UInt64(name.utf8.count))
        for _ in 0..<400 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0...2, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: index)
                default: bytes.insert(Array("{}[]\",:0".utf8).randomElement(using: &random)!, at: index)
                }
            }
            Self.decodeAll(bytes)
        }
    }

    @Test func htmlLikeBodies() {
        var random = SplitMix(state: 7)
        let page = Array("<!DOCTYPE html><HTML><head><TiTlE x=1>İstanbul ﬁ  Service\n Unavailable</title></head>".utf8)
        for length in 0...page.count { Self.decodeAll(Array(page.prefix(length))) }
        let pieces = ["<", "title", ">", "</title>", "<title>", "İ", "ß", "\u{301}", " ", "x", "{", "\""]
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 1...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
            Self.decodeAll(Array(text.joined().utf8))
            _ = try? ResponseBody.json(Array(text.joined().utf8), contentType: "text/html", service: "S")
        }
        do {
            _ = try ResponseBody.json(page, contentType: nil, service: "S")
        } catch {
            #expect(error.message.contains("'İstanbul ﬁ Service Unavailable'"))
        }
    }

    @Test func typeConfusedDocuments() {
        // Valid JSON, wrong types everywhere: every field lookup must cope.
        let documents = [
            #"{"results":[1,"x",null,[],{"kind":5,"trackId":{},"trackName":[]}],"resultCount":"lots"}"#,
            #"{"feed":{"entry":[1,{"id":[],"im:name":5,"link":"x","im:image":{"label":7}}]}}"#,
            #"{"feed":[]}"#, #"[]"#, #"null"#, #"{"results":{"songs":[],"playlists":{"data":[1]}}}"#,
            #"{"data":[{"type":"playlists","relationships":{"tracks":{"data":"x"}}},7]}"#,
            #"{"errors":[]}"#, #"{"errors":"x"}"#,
        ]
        for document in documents { Self.decodeAll(Array(document.utf8)) }
    }
}
