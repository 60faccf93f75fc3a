import PartyRadioCore
import Testing

/// Text from guests, files and the catalog never carries a bidirectional control to a terminal or
/// a page: "Bob\u{202E}3pm.exe" would show as "Bobexe.mp3", and an override left open turns every
/// later line around. They go wherever control characters go.
@Suite struct UnshownTextTests {
    /// Unicode's Bidi_Control characters, listed here rather than asked of the code.
    static let bidiControls: [Unicode.Scalar] =
        [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069].map {
            Unicode.Scalar($0)!
        }

    static func sneaky(_ control: Unicode.Scalar) -> String { "Bob" + String(Character(control)) + "3pm.exe" }

    @Test func everyBidiControlIsDroppedFromNamesAndChat() {
        for control in Self.bidiControls {
            let raw = Self.sneaky(control)
            #expect(GuestName.fromNetwork(raw)?.value == "Bob3pm.exe", "U+\(String(control.value, radix: 16))")
            #expect(ChatBook.validText(raw) == "Bob3pm.exe", "U+\(String(control.value, radix: 16))")
            #expect(JSON.object([("t", .string(raw))]).shown.rendered == #"{"t":"Bob3pm.exe"}"#)
        }
    }

    @Test func aNameTypedWithABidiControlIsRefusedAsControlCharactersAre() {
        for control in Self.bidiControls {
            #expect(throws: NameProblem.controlCharacters) {
                try GuestName(validating: Self.sneaky(control))
            }
        }
    }

    /// What must stay: right-to-left letters themselves, and the joiners emoji are made of.
    @Test func rightToLeftWritingAndEmojiStay() {
        let hebrew = "שלום"
        let family = "👨\u{200D}👩\u{200D}👧"
        #expect(GuestName.fromNetwork(hebrew)?.value == hebrew)
        #expect(ChatBook.validText("\(family) \(hebrew)") == "\(family) \(hebrew)")
        #expect(JSON.string(family).shown == JSON.string(family))
    }
}
