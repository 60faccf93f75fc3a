import Synchronization

/// Where a player's volume is applied: mpv's own volume (`volume`), which scales the audio as it
/// leaves mpv's queue for the output's buffer (100 ms through PulseAudio), or, through PulseAudio,
/// the stream's volume at the server (`ao-volume`), which scales what the server mixes and so is
/// heard at once (CMpvLoader.h, "The stream's volume at the server"). Pure: the player sets what
/// ``settings`` says.
struct PlayerVolumeRoute: Hashable, Sendable {
    /// The output mpv has open, as far as the player knows.
    enum Output: Hashable, Sendable {
        /// None open yet: mpv's own volume carries the level, so that an output other than
        /// PulseAudio's never plays a sample too loud; PulseAudio's stream starts at the level too
        /// (the loader's), so the first buffer it plays is quieter until ``reopened(as:)`` says.
        case unknown
        /// PulseAudio's: the stream's volume carries the level, mpv's stays at 100.
        case server
        /// Any other (ALSA, PipeWire's own, null): mpv's own volume, as without the route.
        case other
    }

    /// 0-100, mpv's scale.
    private(set) var level: Int
    private(set) var output: Output = .unknown

    init(level: Int) { self.level = min(100, max(0, level)) }

    /// What the player sets: mpv's `volume`, and the stream's (`ao-volume`) when the stream carries it.
    var settings: (mpvVolume: Int, streamVolume: Int?) {
        output == .server ? (100, level) : (level, nil)
    }

    /// The level changes; returns what to set.
    mutating func set(_ level: Int) -> (mpvVolume: Int, streamVolume: Int?) {
        self.level = min(100, max(0, level))
        return settings
    }

    /// mpv opened an output named `name` (`current-ao`; nil: none). Returns what to set, or nil
    /// when nothing changes. A new PulseAudio stream is given the level again: the loader gave it
    /// before it played, this is in case it could not.
    mutating func reopened(as name: String?) -> (mpvVolume: Int, streamVolume: Int?)? {
        guard let name else { return nil }
        let now: Output = name == "pulse" ? .server : .other
        guard now != output || now == .server else { return nil }
        output = now
        return settings
    }
}

/// A player's ``PlayerVolumeRoute``, shared with its event thread (which sees the output reopen).
final class PlayerVolumeState: Sendable {
    let route: Mutex<PlayerVolumeRoute>

    init(level: Int) { route = Mutex(PlayerVolumeRoute(level: level)) }
}
