import Testing

@testable import PartyRadioCore

@Suite struct StringTrimTests {
    @Test func trimsWhiteSpaceAndNewlinesAtBothEnds() {
        #expect("  Rooftop  ".trimmingWhitespace() == "Rooftop")
        #expect("\t\r\n a b \n".trimmingWhitespace() == "a b")
        #expect("\u{A0}\u{2003}name\u{3000}\u{85}".trimmingWhitespace() == "name")
        #expect("".trimmingWhitespace() == "")
        #expect(" \n\t ".trimmingWhitespace() == "")
        #expect("inner  space".trimmingWhitespace() == "inner  space")
    }

    @Test func worksOnSubstringsAndKeepsEverythingElse() {
        let parts = "a , b,\tc ".split(separator: ",").map { $0.trimmingWhitespace() }
        #expect(parts == ["a", "b", "c"])
        #expect("é🎸 ".trimmingWhitespace() == "é🎸")
        // Zero-width space is not White_Space (Foundation agrees); a mark after a space stays.
        #expect("\u{200B}x".trimmingWhitespace() == "\u{200B}x")
        #expect(" \u{301}x ".trimmingWhitespace().unicodeScalars.map(\.value) == [0x301, 0x78])
    }
}
