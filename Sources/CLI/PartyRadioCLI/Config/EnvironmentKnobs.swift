import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// The `PARTYRADIO_*` environment variables `partyradio` reads: one table (``table``), parsed once
/// from the command's environment (``CommandContext/knobs``) into the typed values the catalog,
/// the node and the player are handed. partyradio(1)'s ENVIRONMENT is made from the table, and no
/// other file in Sources/ reads such a variable (the fuzzer's entry point aside).
///
/// An unset or empty variable is its default; a value a variable cannot take falls back as its
/// row says (none stops the command).
public struct EnvironmentKnobs: Sendable, Equatable {
    /// The iTunes catalog's base URL (`--itunes-url` replaces it).
    public var iTunesURL = CatalogEndpoints.defaultITunesBaseURL
    /// The Apple Music API's base URL (`--apple-music-url` replaces it).
    public var appleMusicURL = CatalogEndpoints.defaultAppleMusicBaseURL
    /// Apple Music credentials (`--developer-token`, `--key`, `--team`, `--key-id`,
    /// `--music-user-token` replace them).
    public var appleMusicToken: String?
    public var appleMusicKey: String?
    public var appleMusicTeamID: String?
    public var appleMusicKeyID: String?
    public var musicUserToken: String?
    /// The lease on a DJ's records in a `--domain`.
    public var dnsLease = DNSLease()
    /// How a listener's player fetches and plays (the benchmarks' switches).
    public var player = PlayerTuning()

    /// The variables' values in `environment` (none: every default).
    public init(_ environment: [String: String] = [:]) {
        for knob in Self.table {
            guard let text = environment[knob.name], !text.isEmpty else { continue }
            knob.apply(text, &self)
        }
    }

    /// The catalog's base URLs as the DJ and `request` use them.
    public var catalogEndpoints: CatalogEndpoints {
        CatalogEndpoints(iTunesBaseURL: iTunesURL, appleMusicBaseURL: appleMusicURL)
    }

    /// One variable: its name, its default as partyradio(1) shows it, what it does, whether it is
    /// meant to last, and what its (non-empty) value sets.
    public struct Knob: Sendable {
        public enum Stability: String, Sendable {
            /// Part of the interface: documented, kept.
            case stable
            /// A switch for comparisons in the benchmarks and tests: may change or go.
            case experimental
        }

        public let name: String
        public let defaultValue: String
        public let meaning: String
        public let stability: Stability
        let apply: @Sendable (String, inout EnvironmentKnobs) -> Void

        init(
            _ name: String, default defaultValue: String, _ stability: Stability, _ meaning: String,
            apply: @escaping @Sendable (String, inout EnvironmentKnobs) -> Void
        ) {
            self.name = name
            self.defaultValue = defaultValue
            self.stability = stability
            self.meaning = meaning
            self.apply = apply
        }
    }

    /// Every `PARTYRADIO_*` variable the binary reads, the stable ones first.
    public static let table: [Knob] = [
        Knob(
            "PARTYRADIO_ITUNES_URL", default: CatalogEndpoints.defaultITunesBaseURL, .stable,
            "The iTunes catalog's base URL: search, lookup, charts, request, the DJ's --search and --add, "
                + "doctor's catalog check. --itunes-url replaces it."
        ) { $1.iTunesURL = $0 },
        Knob(
            "PARTYRADIO_APPLE_MUSIC_URL", default: CatalogEndpoints.defaultAppleMusicBaseURL, .stable,
            "The Apple Music API's base URL, for --apple-music. --apple-music-url replaces it."
        ) { $1.appleMusicURL = $0 },
        Knob(
            "PARTYRADIO_APPLE_MUSIC_TOKEN", default: "none", .stable,
            "A ready Apple Music developer token; it wins over a key. --developer-token replaces it."
        ) { $1.appleMusicToken = $0 },
        Knob(
            "PARTYRADIO_APPLE_MUSIC_KEY", default: "none", .stable,
            "The MusicKit private key (.p8 file) from which token and --apple-music make a developer token, "
                + "with the team and key IDs. --key replaces it."
        ) { $1.appleMusicKey = $0 },
        Knob(
            "PARTYRADIO_APPLE_MUSIC_TEAM_ID", default: "none", .stable,
            "The 10-character Apple Developer Team ID of that key. --team replaces it."
        ) { $1.appleMusicTeamID = $0 },
        Knob(
            "PARTYRADIO_APPLE_MUSIC_KEY_ID", default: "none", .stable,
            "The key's 10-character ID. --key-id replaces it."
        ) { $1.appleMusicKeyID = $0 },
        Knob(
            "PARTYRADIO_MUSIC_USER_TOKEN", default: "none", .stable,
            "A Music-User-Token sent with Apple Music requests. --music-user-token replaces it."
        ) { $1.musicUserToken = $0 },
        Knob(
            "PARTYRADIO_DNS_LEASE", default: "\(DNSLease.defaultSeconds)", .stable,
            "How many seconds a DJ's records in a --domain count after their last renewal; renewals and the "
                + "records' TTL are a quarter of it. At least \(DNSLease.minimumSeconds) (less counts as "
                + "\(DNSLease.minimumSeconds)); not a whole number: the default."
        ) { text, knobs in
            if let seconds = Int(text) { knobs.dnsLease = DNSLease(seconds: seconds) }
        },
        Knob(
            "PARTYRADIO_MEDIA_CACHE", default: "1", .experimental,
            "0: a listener fetches nothing ahead and mpv streams each track's URL itself (scripts/bench-lossy.py, "
                + "mode stream). Any other value: the default."
        ) { $1.player.mediaCache = $0 != "0" },
        Knob(
            "PARTYRADIO_MEDIA_CACHE_PARTIAL", default: "1", .experimental,
            "0: a track still being fetched waits for the whole file instead of playing from what is there "
                + "(scripts/bench-lossy.py, mode whole). Any other value: the default."
        ) { $1.player.playsPartialFiles = $0 != "0" },
        Knob(
            "PARTYRADIO_PLAYER_PAGEOUT", default: "1", .experimental,
            "0: a playing listener keeps mapped the pages a start touched, instead of dropping them 5 s into "
                + "each newly loaded track (about 70 MB instead of 26 MB; scripts/bench-memory.py). "
                + "Any other value: the default."
        ) { $1.player.releasesStartupPages = $0 != "0" },
        Knob(
            "PARTYRADIO_MPV_OPTIONS", default: "none", .experimental,
            "name=value,name=value: mpv options that add to or replace the player's own "
                + "(pulse-latency-hacks=yes; scripts/bench-speaker.py). A pair without = is ignored."
        ) { text, knobs in
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { knobs.player.mpvOptions[String(parts[0])] = String(parts[1]) }
            }
        },
        Knob(
            "PARTYRADIO_PULSE_REQUEST_MS", default: "\(PlayerTuning.defaultPulseRequestMs)", .experimental,
            "How often PulseAudio asks the player for audio, in milliseconds, at most half of mpv's pulse-buffer; "
                + "0 or less: the server's 20 ms, as mpv does. Not a whole number: the default."
        ) { text, knobs in
            if let ms = Int(text) { knobs.player.pulseRequestMs = max(0, ms) }
        },
        Knob(
            "PARTYRADIO_PULSE_TIMING_MS", default: "\(PlayerTuning.defaultPulseTimingReuseMs)", .experimental,
            "How long one PulseAudio timing report serves the player's delay queries, in milliseconds, "
                + "\(PlayerTuning.pulseTimingReuseRangeMs.lowerBound) to \(PlayerTuning.pulseTimingReuseRangeMs.upperBound); "
                + "0: a round trip to the server for each, as mpv does. Any other value: the default."
        ) { text, knobs in
            if let ms = Int(text), PlayerTuning.pulseTimingReuseRangeMs.contains(ms) {
                knobs.player.pulseTimingReuseMs = ms
            }
        },
    ]
}
