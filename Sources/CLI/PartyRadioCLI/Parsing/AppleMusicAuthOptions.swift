import PartyRadioCatalog

/// How an Apple Music request is authorised: a ready token, or a `.p8` key to make one.
public struct AppleMusicAuthOptions: Equatable, Sendable {
    /// `--developer-token`, else ``EnvironmentKnobs/appleMusicToken``.
    public var developerToken: String?
    /// `--key`, else ``EnvironmentKnobs/appleMusicKey``.
    public var keyPath: String?
    /// `--team`, else ``EnvironmentKnobs/appleMusicTeamID``.
    public var teamID: String?
    /// `--key-id`, else ``EnvironmentKnobs/appleMusicKeyID``.
    public var keyID: String?
    /// `--music-user-token`, else ``EnvironmentKnobs/musicUserToken``.
    public var musicUserToken: String?

    /// The values the environment's `knobs` give; flags given later replace them.
    public init(knobs: EnvironmentKnobs) {
        developerToken = knobs.appleMusicToken
        keyPath = knobs.appleMusicKey
        teamID = knobs.appleMusicTeamID
        keyID = knobs.appleMusicKeyID
        musicUserToken = knobs.musicUserToken
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
                "'--apple-music' needs a developer token: pass --developer-token (or set $PARTYRADIO_APPLE_MUSIC_TOKEN), "
                    + "or --key, --team and --key-id to make one.", command: command)
        }
        try Command.TokenOptions.checkIdentifiers(team: teamID, keyID: keyID, command: command)
        return self
    }
}
