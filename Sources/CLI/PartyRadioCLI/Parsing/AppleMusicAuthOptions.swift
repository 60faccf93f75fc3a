import PartyRadioCatalog

/// How an Apple Music request is authorised: a ready token, or a `.p8` key to make one.
public struct AppleMusicAuthOptions: Equatable, Sendable {
    /// `--developer-token`, else `$PARTYRADIO_APPLE_MUSIC_TOKEN`.
    public var developerToken: String?
    /// `--key`, else `$PARTYRADIO_APPLE_MUSIC_KEY`.
    public var keyPath: String?
    /// `--team`, else `$PARTYRADIO_APPLE_MUSIC_TEAM_ID`.
    public var teamID: String?
    /// `--key-id`, else `$PARTYRADIO_APPLE_MUSIC_KEY_ID`.
    public var keyID: String?
    /// `--music-user-token`, else `$PARTYRADIO_MUSIC_USER_TOKEN`.
    public var musicUserToken: String?

    /// The values the environment gives; flags given later replace them.
    public init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        developerToken = value("PARTYRADIO_APPLE_MUSIC_TOKEN")
        keyPath = value("PARTYRADIO_APPLE_MUSIC_KEY")
        teamID = value("PARTYRADIO_APPLE_MUSIC_TEAM_ID")
        keyID = value("PARTYRADIO_APPLE_MUSIC_KEY_ID")
        musicUserToken = value("PARTYRADIO_MUSIC_USER_TOKEN")
    }

    static let help: [(String, String)] = [
        ("--developer-token <jwt>", "Apple Music developer token (default: $PARTYRADIO_APPLE_MUSIC_TOKEN)."),
        ("--key <file.p8>", "Make the token from this MusicKit key instead (with --team and --key-id)."),
        ("--team <id>", "Your 10-character Apple Developer Team ID."),
        ("--key-id <id>", "The 10-character ID of the .p8 key."),
        ("--music-user-token <t>", "Send a Music-User-Token (default: $PARTYRADIO_MUSIC_USER_TOKEN)."),
        ("--apple-music-url <url>", "Apple Music API base URL (default: https://api.music.apple.com)."),
    ]

    /// Consumes `option` if it is one of these; false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--developer-token": developerToken = try scanner.value(for: option)
        case "--key": keyPath = try scanner.value(for: option)
        case "--team": teamID = try scanner.value(for: option)
        case "--key-id": keyID = try scanner.value(for: option)
        case "--music-user-token": musicUserToken = try scanner.value(for: option)
        default: return false
        }
        return true
    }

    /// Checks that a ready token, or a complete key triple to make one, is there. A ready token
    /// is used when given; otherwise one is made from the key.
    func validated(command: String) throws(UsageError) -> AppleMusicAuthOptions {
        if developerToken != nil { return self }
        guard keyPath != nil else {
            throw UsageError(
                "'--apple-music' needs a developer token: pass --developer-token (or set "
                    + "PARTYRADIO_APPLE_MUSIC_TOKEN), or --key, --team and --key-id to make one.", command: command)
        }
        try Command.TokenOptions.checkIdentifiers(team: teamID, keyID: keyID, command: command)
        return self
    }
}
