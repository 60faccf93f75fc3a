import PartyRadioCore

/// The tracks queued when the DJ names no library.
enum DemoLibrary {
    static func tracks() -> [Track] {
        let titles = [
            ("Rooftop Sunrise", 32), ("Bassline Picnic", 41), ("Neon Lemonade", 36), ("Slow Dance Protocol", 45),
            ("Multicast Me Maybe", 30), ("Last Train Home", 38),
        ]
        return titles.enumerated().map { index, entry in
            Track(
                id: "demo:\(index + 1)", title: entry.0, artist: "The Partyradio Band", album: "Demo Night",
                durationMs: UInt32(entry.1 * 1000), source: "demo:\(index + 1)")
        }
    }
}
