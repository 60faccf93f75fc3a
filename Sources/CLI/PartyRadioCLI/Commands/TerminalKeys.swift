import PartyRadioCore

/// The single keys of the live views, as the typed controls the same nodes take from MPRIS and
/// from lines on stdin (``DJControl/parse(line:)``, ``ListenerControl/parse(line:)``), and the help
/// line each view shows for them.
enum TerminalKeys {
    /// The DJ's keys. `w` flips between the QR code of the guests' page and the DJ's own, so the
    /// map remembers which one it asked for last.
    struct DJ {
        private(set) var showingDJCode = false

        /// The control `key` stands for; nil for a key that does nothing.
        mutating func control(for key: UInt8) -> DJControl? {
            switch key {
            case UInt8(ascii: "n"): return .next
            case UInt8(ascii: "p"): return .previous
            case UInt8(ascii: " "): return .toggle
            case UInt8(ascii: "s"): return .shuffle
            case UInt8(ascii: "r"): return .setRepeat(nil)
            case UInt8(ascii: "+"), UInt8(ascii: "="): return .volume(.by(10))
            case UInt8(ascii: "-"): return .volume(.by(-10))
            case UInt8(ascii: "a"): return .approve(.next)
            case UInt8(ascii: "d"): return .drop(.next)
            case UInt8(ascii: "k"): return .speakerKey(.pick)
            case UInt8(ascii: "]"): return .speakerKey(.volume(by: 10))
            case UInt8(ascii: "["): return .speakerKey(.volume(by: -10))
            case UInt8(ascii: "M"): return .speakerKey(.toggleMute)
            case UInt8(ascii: "w"):
                showingDJCode.toggle()
                return .qr(forDJ: showingDJCode)
            case UInt8(ascii: "q"): return .quit
            default: return nil
            }
        }
    }

    /// The control a listener's `key` stands for; nil for a key that does nothing.
    static func listener(_ key: UInt8) -> ListenerControl? {
        switch key {
        case UInt8(ascii: "u"): .vote(.up)
        case UInt8(ascii: "d"): .vote(.down)
        case UInt8(ascii: "c"): .vote(.clear)
        case UInt8(ascii: "m"): .toggleMute
        case UInt8(ascii: "+"), UInt8(ascii: "="): .volume(.by(10))
        case UInt8(ascii: "-"): .volume(.by(-10))
        case UInt8(ascii: "q"): .quit
        default: nil
        }
    }

    /// The DJ's keys, in two lines that fit an 80-column terminal with the view's indent (a line
    /// the view cuts would hide the last keys): `repeatMode` and `volume` say what `r` and `+`/`-`
    /// act on now.
    static func djHelp(repeatMode: String, volume: Int) -> [String] {
        [
            "keys: n next  p prev  space pause  s shuffle  r repeat (\(repeatMode))  k speaker",
            "      +/- volume (\(volume))  a approve  d drop  w DJ QR  ][ M speaker  q quit",
        ]
    }

    /// The listener's help line (`m` says what it does now).
    static func listenerHelp(muted: Bool) -> [String] {
        ["keys: u vote up  d down  c clear  m \(muted ? "unmute" : "mute")  +/- volume  q quit"]
    }
}
