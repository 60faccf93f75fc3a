/// A value of an MPRIS property as the DJ's player follower read it off the bus: the D-Bus types
/// MPRIS players send, and anything else as ``other`` (with its signature, for the log).
public enum PlayerValue: Hashable, Sendable {
    case string(String)
    case objectPath(String)
    case strings([String])
    case int64(Int64)
    case uint64(UInt64)
    case int32(Int32)
    case uint32(UInt32)
    case double(Double)
    case bool(Bool)
    /// A type the parser has no use for (a nested dictionary, a byte array, …).
    case other(signature: String)
}

/// What the player a live DJ follows over MPRIS is doing (docs/LIVE.md, "Now playing from the
/// player"): the DJ machine takes it as ``LiveInput/player(_:)`` and makes its track the now playing.
///
/// Everything in it comes from another program on the DJ's session bus and is not trusted: it is
/// made by ``parse(player:metadata:status:positionUs:)`` alone, which keeps only what makes sense.
public struct LivePlayerState: Hashable, Sendable {
    public enum Status: String, Hashable, Sendable {
        case playing = "Playing"
        case paused = "Paused"
        case stopped = "Stopped"
    }

    /// The player's bus name without `org.mpris.MediaPlayer2.` (`mpv`, `spotify`), cleaned and cut.
    public var player: String
    public var status: Status
    /// What plays; nil when the player names nothing usable (no title, or no metadata at all).
    public var track: LivePlayerTrack?
    /// Where the player is in its track (µs, never negative, never beyond a known length); nil when
    /// it did not say.
    public var positionUs: Int64?

    public init(player: String, status: Status, track: LivePlayerTrack?, positionUs: Int64?) {
        self.player = player
        self.status = status
        self.track = track
        self.positionUs = positionUs
    }

    /// The longest title, artist, album or player name kept, in UTF-8 bytes: what a snapshot carries
    /// (``StateSnapshot/Limit/text``).
    public static let maxText = StateSnapshot.Limit.text
    /// The longest track ID and artwork URL kept; longer ones are dropped, not cut (a cut ID could
    /// name another track, a cut URL fetches nothing).
    public static let maxTrackID = 512
    public static let maxArtURL = 2048
    /// The longest track length believed: a day. A player that says more (a stream's `INT64_MAX`)
    /// has no length.
    public static let maxLengthUs: Int64 = 24 * 3600 * 1_000_000
    /// The most artists joined into one line (`xesam:artist` is a list).
    public static let maxArtists = 8
    /// MPRIS's track ID for "no track" (`/org/mpris/MediaPlayer2/TrackList/NoTrack`).
    public static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// The state from the player's properties as read off the bus: `metadata` its `Metadata`
    /// (`a{sv}`), `status` its `PlaybackStatus`, `positionUs` its `Position`. Whatever has the wrong
    /// type, is empty, negative or absurdly large is left out, and text loses control characters,
    /// escape sequences and bidirectional overrides (``ShownText``) and is cut to ``maxText`` bytes.
    /// A track needs a title: without one the station goes on as "Live".
    public static func parse(
        player: String, metadata: [String: PlayerValue], status: PlayerValue?, positionUs: PlayerValue?
    ) -> LivePlayerState {
        let name = text(.string(player)) ?? ""
        let shown: Status =
            if case .string(let raw)? = status, let known = Status(rawValue: raw) { known } else { .stopped }
        let track = LivePlayerTrack.parse(metadata)
        var position = positionUs.flatMap(integer).flatMap { $0 >= 0 && $0 <= maxLengthUs ? $0 : nil }
        if let position0 = position, let length = track?.lengthUs, length > 0 { position = min(position0, length) }
        return LivePlayerState(player: name, status: shown, track: track, positionUs: position)
    }

    /// Text as shown: cleaned, trimmed, cut to `limit` bytes at a character boundary; nil when empty
    /// or not text.
    static func text(_ value: PlayerValue?, limit: Int = maxText) -> String? {
        guard case .string(let raw)? = value else { return nil }
        let cleaned = ShownText.cleaned(String(raw.utf8Prefix(maxBytes: limit * 4))).trimmingWhitespace()
        let cut = String(cleaned.utf8Prefix(maxBytes: limit)).trimmingWhitespace()
        return cut.isEmpty ? nil : cut
    }

    /// An integer of any width D-Bus has; nil for anything else or a value beyond `Int64`.
    static func integer(_ value: PlayerValue) -> Int64? {
        switch value {
        case .int64(let number): number
        case .uint64(let number): number <= UInt64(Int64.max) ? Int64(number) : nil
        case .int32(let number): Int64(number)
        case .uint32(let number): Int64(number)
        default: nil
        }
    }
}

/// The track a followed player says it plays, as far as it makes sense.
public struct LivePlayerTrack: Hashable, Sendable {
    /// `mpris:trackid` (an object path, or a string from players that send one); "" when missing.
    public var trackID: String
    public var title: String
    public var artist: String
    public var album: String
    /// `mpris:artUrl` when it is an http(s) or file URL; nil otherwise.
    public var artURL: String?
    /// `mpris:length` in µs; 0 when unknown (a stream, or nonsense).
    public var lengthUs: Int64

    public init(trackID: String, title: String, artist: String, album: String, artURL: String?, lengthUs: Int64) {
        self.trackID = trackID
        self.title = title
        self.artist = artist
        self.album = album
        self.artURL = artURL
        self.lengthUs = lengthUs
    }

    static func parse(_ metadata: [String: PlayerValue]) -> LivePlayerTrack? {
        typealias State = LivePlayerState
        guard let title = State.text(metadata["xesam:title"]) else { return nil }
        var trackID = ""
        switch metadata["mpris:trackid"] {
        case .objectPath(let path)?, .string(let path)?:
            if path.utf8.count <= State.maxTrackID, path != State.noTrack,
                !path.unicodeScalars.contains(where: \.isNeverShown)
            {
                trackID = path
            }
        default: break
        }
        let artists: [String] =
            switch metadata["xesam:artist"] {
            case .strings(let names)?: names.prefix(State.maxArtists).compactMap { State.text(.string($0)) }
            case .string(let name)?: [State.text(.string(name))].compactMap { $0 }
            default: []
            }
        let artist = State.text(.string(artists.joined(separator: ", "))) ?? ""
        let album = State.text(metadata["xesam:album"]) ?? ""
        var artURL: String?
        if case .string(let url)? = metadata["mpris:artUrl"], url.utf8.count <= State.maxArtURL,
            url.hasPrefix("https://") || url.hasPrefix("http://") || url.hasPrefix("file://"),
            !url.unicodeScalars.contains(where: { $0.isNeverShown || $0 == " " })
        {
            artURL = url
        }
        var length: Int64 = 0
        if let raw = metadata["mpris:length"].flatMap(State.integer), raw > 0, raw <= State.maxLengthUs {
            length = raw
        }
        return LivePlayerTrack(
            trackID: trackID, title: title, artist: artist, album: album, artURL: artURL, lengthUs: length)
    }

    /// The station's track for it: a `live:` source like ``Track/live`` (listeners play the frames),
    /// an ID of its own (`live:` and a hash of the player's track ID and words) so that a new track
    /// is a new ID, and the length in ms.
    public var stationTrack: Track {
        var hash = FNV1a64()
        for part in [trackID, title, artist, album] {
            hash.combine(part.utf8)
            hash.combine([0])
        }
        let id = "live:" + String(hash.value, radix: 16)
        return Track(
            id: id, title: title, artist: artist, album: album, durationMs: UInt32(lengthUs / 1000), source: "live:")
    }
}

/// `--live-player`: which MPRIS player a live DJ follows.
public enum LivePlayerChoice: Hashable, Sendable {
    /// Whichever player on the session bus plays (the default).
    case playing
    /// The player whose bus name is `org.mpris.MediaPlayer2.NAME` (or an instance of it).
    case named(String)
    /// None: now playing stays "Live" (`--live-player none`).
    case none

    /// `--live-player`'s value: `none`, or a bus name's suffix (letters, digits, `_`, `-` and dots
    /// between them, as D-Bus allows); nil when it is not one.
    public init?(argument: String) {
        if argument == "none" {
            self = .none
            return
        }
        let elements = argument.split(separator: ".", omittingEmptySubsequences: false)
        guard !argument.isEmpty, argument.utf8.count <= 200,
            elements.allSatisfy({ element in
                !element.isEmpty
                    && element.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-")
                    }
            })
        else { return nil }
        self = .named(argument)
    }
}
