import Testing

@testable import PartyRadioCore

/// Form bodies from browsers (and from anyone else on the LAN): parsed strictly, never a crash.
@Suite struct WebFormTests {
    @Test func parsesWhatBrowsersSend() {
        let form = WebForm.parse(Array("track=local%3Aab12&choice=up&text=two+words%20%E2%9C%93&empty=".utf8))
        #expect(form == ["track": "local:ab12", "choice": "up", "text": "two words ✓", "empty": ""])
        #expect(WebForm.parse([]) == [:])
        #expect(WebForm.parse(Array("a=1&a=2".utf8)) == ["a": "1"])
        #expect(WebForm.parse(Array("flag".utf8)) == ["flag": ""])
    }

    @Test func refusesMalformedForms() {
        for bad in ["a=%", "a=%4", "a=%zz", "a=%C3%28", "=value", "a=%FF"] {
            #expect(WebForm.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
        let many = (0...WebForm.maxFields).map { "f\($0)=1" }.joined(separator: "&")
        #expect(WebForm.parse(Array(many.utf8)) == nil)
    }

    @Test func encodeAndParseRoundTrip() {
        var random = SplitMix64(seed: 9)
        let alphabet = Array("aZ09 -_.~&=+%?/\\\"<>✓é😀\u{0}\n".unicodeScalars)
        for _ in 0..<2_000 {
            let length = Int(random.next() % 24)
            var text = ""
            for _ in 0..<length { text.unicodeScalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let body = "name=" + WebForm.encode(text)
            #expect(WebForm.parse(Array(body.utf8)) == ["name": text])
        }
    }

    @Test func arbitraryBytesNeverCrash() {
        var random = SplitMix64(seed: 42)
        let interesting: [UInt8] = Array("%&=+".utf8) + [0x00, 0x80, 0xC3, 0xFF, 0x41, 0x30]
        for _ in 0..<20_000 {
            let length = Int(random.next() % 40)
            let bytes = (0..<length).map { _ in
                random.next() % 2 == 0
                    ? interesting[Int(random.next() % UInt64(interesting.count))]
                    : UInt8(truncatingIfNeeded: random.next())
            }
            if let form = WebForm.parse(bytes) { #expect(form.count <= WebForm.maxFields) }
        }
    }
}
