import Testing

@testable import PartyRadioCore

/// The one sanitiser for untrusted text (``ShownText``), on hostile and malformed input: whole escape
/// sequences go, invisible characters go, tabs and line breaks become a space, combining marks are
/// capped per letter. The rules are restated here, never asked of the code.
@Suite struct ShownTextTests {
    /// Letters, digits and spaces: what must come through untouched.
    static let plain = Array("abcXYZ019 _-.,!?éßж中")

    static func plainText(_ random: inout SplitMix64, length: Int) -> String {
        String((0..<length).map { _ in plain[Int(random.next() % UInt64(plain.count))] })
    }

    /// A well-formed escape sequence as terminals read them (ECMA-48): CSI with parameters and a
    /// final byte, OSC/DCS/APC strings ended by BEL or ST, two-character escapes, and the C1 forms.
    static func escape(_ random: inout SplitMix64) -> String {
        let params = (0..<Int(random.next() % 6)).map { _ in
            String(Character(Unicode.Scalar(0x30 + UInt8(random.next() % 16))))
        }
        .joined()
        let final = String(Character(Unicode.Scalar(0x40 + UInt8(random.next() % 63))))
        let payload = "0;pwned http://x/\(random.next() % 100) ☃"
        switch random.next() % 8 {
        case 0: return "\u{1B}[" + params + final
        case 1: return "\u{1B}]" + payload + "\u{07}"
        case 2: return "\u{1B}]8;;" + payload + "\u{1B}\\"
        case 3: return "\u{1B}P" + payload + "\u{1B}\\"
        case 4: return "\u{1B}_" + payload + "\u{9C}"
        case 5: return "\u{1B}" + String(Array("78=>cDEHMNZ")[Int(random.next() % 11)])
        case 6: return "\u{1B}(B"
        default: return "\u{9B}" + params + final
        }
    }

    @Test func wholeEscapeSequencesGoAndTheTextAroundThemStays() {
        var random = SplitMix64(seed: 0xE5C)
        for round in 0..<2_000 {
            var raw = ""
            var expected = ""
            for _ in 0..<Int(random.next() % 5) + 1 {
                let words = Self.plainText(&random, length: Int(random.next() % 6))
                raw += words + Self.escape(&random)
                expected += words
            }
            #expect(ShownText.cleaned(raw) == expected, "round \(round): \(raw.debugDescription)")
        }
    }

    @Test func knownAttacksLeaveNoRemnant() {
        #expect(ShownText.cleaned("\u{1B}[31mred\u{1B}[0m") == "red")
        #expect(ShownText.cleaned("\u{1B}[2J\u{1B}[1;1HBob") == "Bob")
        #expect(ShownText.cleaned("\u{1B}]0;title\u{07}Bob") == "Bob")
        #expect(ShownText.cleaned("\u{1B}]8;;http://evil/\u{1B}\\click\u{1B}]8;;\u{1B}\\") == "click")
        #expect(ShownText.cleaned("Bob\u{1B}]0;never ends") == "Bob")
        #expect(ShownText.cleaned("Bob\u{1B}") == "Bob")
        #expect(GuestName.fromNetwork("\u{1B}[31mSam\u{1B}[0m")?.value == "Sam")
        #expect(ChatBook.validText("hi \u{1B}[5mblink") == "hi blink")
    }

    static let invisible: [Unicode.Scalar] =
        [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0xE0001, 0xE0041, 0xE0061, 0xE007F].map { Unicode.Scalar($0)! }

    @Test func zeroWidthAndTagCharactersGo() {
        for scalar in Self.invisible {
            let raw = "Sa" + String(Character(scalar)) + "m"
            let hex = String(scalar.value, radix: 16)
            #expect(GuestName.fromNetwork(raw)?.value == "Sam", "U+\(hex)")
            #expect(ChatBook.validText(raw) == "Sam", "U+\(hex)")
            #expect(JSON.string(raw).shown == JSON.string("Sam"), "U+\(hex)")
            #expect(throws: NameProblem.controlCharacters, "U+\(hex)") { try GuestName(validating: raw) }
        }
        // Hidden ASCII in tags ("ignore all previous" spelt in U+E0000 + letter) shows nothing.
        let hidden = String(
            String.UnicodeScalarView("ignore".unicodeScalars.map { Unicode.Scalar(0xE0000 + $0.value)! }))
        #expect(ShownText.cleaned("ok" + hidden) == "ok")
    }

    @Test func tabsAndLineBreaksBecomeOneSpace() {
        #expect(GuestName.fromNetwork("Ann\tLee")?.value == "Ann Lee")
        #expect(ChatBook.validText("one\ntwo\r\nthree\rfour") == "one two three four")
        #expect(ShownText.cleaned("a\u{2028}b\u{85}c") == "a b c")
        #expect(ShownText.cleaned("a\r\nb", keepingLineBreaks: true) == "a\nb")
        #expect(ShownText.cleaned("a\rb\tc", keepingLineBreaks: true) == "a b c")
    }

    @Test func combiningMarksAreCappedPerLetter() {
        let zalgo = "Z" + String(repeating: "\u{0301}", count: 200) + "al" + String(repeating: "\u{0336}", count: 50)
        let name = GuestName.fromNetwork(zalgo)?.value
        #expect(name == "Z\u{0301}\u{0301}\u{0301}al\u{0336}\u{0336}\u{0336}")
        #expect(throws: NameProblem.controlCharacters) {
            try GuestName(validating: "Za" + String(repeating: "\u{0301}", count: 4))
        }
        // What real writing needs stays: Vietnamese (two marks), Devanagari, a keycap, accents.
        for fine in ["Nguyễn", "Tiê\u{0301}ng", "नमस्ते", "1\u{FE0F}\u{20E3}", "José", "e\u{0301}\u{0302}\u{0323}"] {
            #expect(ShownText.cleaned(fine) == fine, "\(fine)")
            #expect((try? GuestName(validating: fine))?.value == fine, "\(fine)")
        }
    }

    /// Random malformed input from pieces attackers use: whatever comes out holds every rule.
    @Test func whateverComesInWhatIsShownHoldsTheRules() {
        let pieces: [String] = [
            "\u{1B}", "[", "31m", "]0;", "\u{07}", "\u{9C}", "\u{9B}", "\u{9D}", "\\", "\u{200B}", "\u{200D}",
            "\u{2060}", "\u{FEFF}", "\u{E0041}", "\u{0301}", "\u{0336}", "\u{202E}", "\u{2066}", "\t", "\r", "\n",
            "\u{0}", "\u{7F}", "a", "Z", " ", "é", "👨", "👩", "\u{FE0F}", "\u{1F3FD}", "ש", "中",
        ]
        var random = SplitMix64(seed: 77)
        for round in 0..<5_000 {
            let raw = (0..<Int(random.next() % 24)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }
                .joined()
            for keeping in [false, true] {
                let shown = ShownText.cleaned(raw, keepingLineBreaks: keeping)
                let scalars = Array(shown.unicodeScalars)
                let why = "round \(round), \(raw.debugDescription) → \(shown.debugDescription)"
                #expect(ShownText.cleaned(shown, keepingLineBreaks: keeping) == shown, "not stable: \(why)")
                var marks = 0
                for (index, scalar) in scalars.enumerated() {
                    let category = scalar.properties.generalCategory
                    #expect(category != .control || (keeping && scalar == "\n"), "control: \(why)")
                    #expect(!scalar.properties.isBidiControl, "bidi: \(why)")
                    #expect(!(0xE0000...0xE007F).contains(scalar.value), "tag: \(why)")
                    #expect(![0x200B, 0x200C, 0x2060, 0xFEFF].contains(scalar.value), "zero-width: \(why)")
                    #expect(![0x09, 0x0D].contains(scalar.value), "tab or CR: \(why)")
                    if scalar == "\u{200D}" {
                        // Only inside an emoji sequence: an emoji (or its selector) before, an emoji after.
                        let before = index > 0 ? scalars[index - 1] : " "
                        let after = index + 1 < scalars.count ? scalars[index + 1] : " "
                        #expect(
                            (before.value > 0xFF && before.properties.isEmoji || before == "\u{FE0F}")
                                && after.value > 0xFF && after.properties.isEmoji, "joiner: \(why)")
                    }
                    switch category {
                    case .nonspacingMark, .spacingMark, .enclosingMark: marks += 1
                    default: marks = 0
                    }
                    #expect(marks <= 3, "marks: \(why)")
                }
                if !keeping { #expect(!shown.contains("\u{1B}") && !shown.contains("\n")) }
            }
        }
    }
}
