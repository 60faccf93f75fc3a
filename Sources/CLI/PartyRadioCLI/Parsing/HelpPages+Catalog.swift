/// The catalog commands' pages.
extension HelpPages {
    static let search = HelpText(
        overview: "Search Apple's catalog for songs to queue.",
        usage: "partyradio search <term>... [--country <cc>] [--limit <n>] [--no-explicit] [--json]\n"
            + "       partyradio search --apple-music [--types songs,playlists] <term>...",
        arguments: [("<term>", "What to look for; several words are one term (e.g. daft punk).")],
        options: [
            ("--country <cc>", "Storefront country code (default: from the locale, else us)."),
            ("--limit <n>", "How many results, 1-200 (default: 50; 1-25 with --apple-music)."),
            ("--no-explicit", "Clean mode for a party: leave out explicit tracks."),
            ("--apple-music", "Search the Apple Music API (needs a developer token)."),
            ("--types <list>", "With --apple-music: songs, playlists or songs,playlists."),
        ] + AppleMusicAuthOptions.help + CatalogServiceOptions.help + CommonOptions.help)

    static let lookup = HelpText(
        overview: "Look up songs by their catalog track IDs.",
        usage: "partyradio lookup <id>... [--country <cc>] [--json]\n"
            + "       partyradio lookup --apple-music [<id>... | --playlist <playlist-id>]",
        arguments: [("<id>", "Track IDs, as separate arguments or comma-separated.")],
        options: [
            ("--country <cc>", "Storefront country code (default: from the locale, else us)."),
            ("--apple-music", "Look up in the Apple Music API (needs a developer token)."),
            ("--playlist <id>", "With --apple-music: list an Apple Music playlist's songs."),
        ] + AppleMusicAuthOptions.help + CatalogServiceOptions.help + CommonOptions.help)

    static let charts = HelpText(
        overview: "Show a country's top songs from the iTunes chart feed.",
        usage: "partyradio charts [--country <cc>] [--limit <n>] [--json]",
        options: [
            ("--country <cc>", "Chart country code (default: from the locale, else us)."),
            ("--limit <n>", "How many songs, 1-200 (default: 25)."),
        ] + CatalogServiceOptions.help + CommonOptions.help)

    static let token = HelpText(
        overview: "Make an Apple Music developer token (an ES256 JWT) from your MusicKit key.",
        usage: "partyradio token --key <AuthKey.p8> --team <team-id> --key-id <key-id> [--ttl <days>] [--json]",
        options: [
            ("--key <file.p8>", "The private key from Apple Developer (default: $PARTYRADIO_APPLE_MUSIC_KEY)."),
            ("--team <id>", "Your 10-character Team ID (default: $PARTYRADIO_APPLE_MUSIC_TEAM_ID)."),
            ("--key-id <id>", "The key's 10-character ID (default: $PARTYRADIO_APPLE_MUSIC_KEY_ID)."),
            ("--ttl <days>", "How long the token lives, 1-180 days (default: 30)."),
            ("--json", "Print the token with its claims as JSON."),
        ] + CommonOptions.help)
}
