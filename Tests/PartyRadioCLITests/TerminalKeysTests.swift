import PartyRadioCore
import Testing

@testable import PartyRadioCLI

/// The live views' keys are the controls MPRIS and stdin's lines give: each key's control, written
/// as a line, is the control the line gives.
@Suite struct TerminalKeysTests {
    func key(_ character: Character) -> UInt8 { character.asciiValue! }

    @Test func aListenerVotesMutesAndTurnsItsOwnVolume() {
        #expect(TerminalKeys.listener(key("u")) == .vote(.up))
        #expect(TerminalKeys.listener(key("d")) == .vote(.down))
        #expect(TerminalKeys.listener(key("c")) == .vote(.clear))
        #expect(TerminalKeys.listener(key("m")) == .toggleMute)
        #expect(TerminalKeys.listener(key("+")) == .volume(.by(10)))
        #expect(TerminalKeys.listener(key("=")) == .volume(.by(10)))
        #expect(TerminalKeys.listener(key("-")) == .volume(.by(-10)))
        #expect(TerminalKeys.listener(key("q")) == .quit)
        #expect(TerminalKeys.listener(key("n")) == nil && TerminalKeys.listener(key(" ")) == nil)
        #expect(ControlReader.input(ListenerControl.quit).isQuit)
        #expect(!ControlReader.input(ListenerControl.vote(.up)).isQuit)
    }

    @Test func theListenersKeysAreTheLinesItsStdinTakes() throws {
        for byte in UInt8(0)..<128 {
            guard let control = TerminalKeys.listener(byte), control != .toggleMute else { continue }
            #expect(try ListenerControl.parse(line: control.description) == control, "key \(byte)")
        }
        #expect(try ListenerControl.parse(line: "toggle-mute") == .toggleMute)
    }

    @Test func theDJsKeysAsBeforeWithWFlippingTheQRCode() {
        var keys = TerminalKeys.DJ()
        #expect(keys.control(for: key("n")) == .next)
        #expect(keys.control(for: key("p")) == .previous)
        #expect(keys.control(for: key(" ")) == .toggle)
        #expect(keys.control(for: key("s")) == .shuffle)
        #expect(keys.control(for: key("r")) == .setRepeat(nil))
        #expect(keys.control(for: key("+")) == .volume(.by(10)) && keys.control(for: key("-")) == .volume(.by(-10)))
        #expect(keys.control(for: key("a")) == .approve(.next) && keys.control(for: key("d")) == .drop(.next))
        #expect(keys.control(for: key("w")) == .qr(forDJ: true))
        #expect(keys.control(for: key("w")) == .qr(forDJ: false))
        #expect(keys.control(for: key("q")) == .quit && ControlReader.input(DJControl.quit).isQuit)
        #expect(keys.control(for: key("u")) == nil)
        // The speaker keys: k picks, ] and [ step the pick's volume, M (capital) mutes it.
        #expect(keys.control(for: key("k")) == .speakerKey(.pick))
        #expect(keys.control(for: key("]")) == .speakerKey(.volume(by: 10)))
        #expect(keys.control(for: key("[")) == .speakerKey(.volume(by: -10)))
        #expect(keys.control(for: key("M")) == .speakerKey(.toggleMute) && keys.control(for: key("m")) == nil)
    }

    @Test func eachViewNamesItsKeys() {
        let listener = TerminalKeys.listenerHelp(muted: false).joined(separator: " ")
        for word in ["u vote up", "d down", "c clear", "m mute", "+/- volume", "q quit"] {
            #expect(listener.contains(word), "\(word)")
        }
        #expect(TerminalKeys.listenerHelp(muted: true).joined().contains("m unmute"))
        let dj = TerminalKeys.djHelp(repeatMode: "all", volume: 100)
        for word in [
            "n next", "p prev", "space pause", "s shuffle", "r repeat (all)", "+/- volume (100)", "a approve",
            "d drop", "w DJ QR", "q quit", "k speaker", "][ M speaker",
        ] {
            #expect(dj.contains { $0.contains(word) }, "\(word)")
        }
    }

    /// Every key shows on an 80-column terminal: each help line, as the view indents it, is
    /// narrower than the 79 columns the view leaves a line (it cuts the rest).
    @Test func everyKeyLineFitsEightyColumns() {
        let lines =
            TerminalKeys.djHelp(repeatMode: "all", volume: 100) + TerminalKeys.listenerHelp(muted: true)
        for line in lines { #expect(("   " + line).count <= 79, "\(line.count + 3) columns: \(line)") }
    }
}

extension NodeInput {
    fileprivate var isQuit: Bool { if case .quit = self { true } else { false } }
}
