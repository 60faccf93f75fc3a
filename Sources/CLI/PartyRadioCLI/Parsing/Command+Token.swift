import PartyRadioCatalog

extension Command {
    /// `partyradio token --key K.p8 --team T --key-id K [--ttl DAYS]`
    public struct TokenOptions: Equatable, Sendable {
        /// How long a token lives without `--ttl`.
        public static let defaultLifetimeDays = 30
        /// `--key FILE.p8`, else ``EnvironmentKnobs/appleMusicKey``.
        public var keyPath: String
        /// `--team ID`, else ``EnvironmentKnobs/appleMusicTeamID``.
        public var teamID: String
        /// `--key-id ID`, else ``EnvironmentKnobs/appleMusicKeyID``.
        public var keyID: String
        /// `--ttl DAYS`: 1–180.
        public var lifetimeDays: Int
        /// `--json`: the token with its claims.
        public var json = false
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()

        /// Fails unless `team` and `keyID` are both there and look like Apple's 10-character IDs.
        static func checkIdentifiers(team: String?, keyID: String?, command: String) throws(UsageError) {
            guard let team else {
                throw UsageError(
                    "Pass your Apple Developer Team ID with --team (10 characters, e.g. ABCDE12345).",
                    command: command)
            }
            guard DeveloperTokenClaims.isAppleIdentifier(team) else {
                throw UsageError(
                    "'--team' takes your 10-character Team ID (capital letters and digits); got '\(team)'.",
                    command: command)
            }
            guard let keyID else {
                throw UsageError(
                    "Pass the key's 10-character ID with --key-id (it is in the AuthKey_<ID>.p8 file name).",
                    command: command)
            }
            guard DeveloperTokenClaims.isAppleIdentifier(keyID) else {
                throw UsageError(
                    "'--key-id' takes the key's 10-character ID (capital letters and digits); got '\(keyID)'.",
                    command: command)
            }
        }
    }

    static func parseToken(_ arguments: [String], knobs: EnvironmentKnobs) throws(UsageError)
        -> TokenOptions
    {
        let command = "token"
        var scanner = ArgumentScanner(arguments, command: command)
        var keyPath = knobs.appleMusicKey
        var team = knobs.appleMusicTeamID
        var keyID = knobs.appleMusicKeyID
        var days = TokenOptions.defaultLifetimeDays
        var json = false
        var common = CommonOptions()
        while let option = scanner.nextOption() {
            if try common.consume(option, from: &scanner) { continue }
            switch option {
            case "--key": keyPath = try scanner.value(for: option)
            case "--team": team = try scanner.value(for: option)
            case "--key-id": keyID = try scanner.value(for: option)
            case "--json": json = true
            case "--ttl": days = try lifetime(for: option, from: &scanner)
            default: throw scanner.unknown(option)
            }
        }
        if let extra = scanner.positionals.first {
            throw UsageError("'token' takes no arguments; got '\(extra)'. Pass the key with --key.", command: command)
        }
        guard let keyPath, !keyPath.isEmpty else {
            throw UsageError("Pass your MusicKit key with --key AuthKey_XXXXXXXXXX.p8.", command: command)
        }
        try TokenOptions.checkIdentifiers(team: team, keyID: keyID, command: command)
        return TokenOptions(
            keyPath: keyPath, teamID: team!, keyID: keyID!, lifetimeDays: days, json: json, common: common)
    }

    /// `--ttl 30` or `--ttl 30d`: whole days, at most Apple's six months.
    private static func lifetime(for option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Int {
        let raw = try scanner.value(for: option)
        let digits = raw.hasSuffix("d") ? String(raw.dropLast()) : raw
        guard let days = Int(digits), days >= 1 else {
            throw UsageError(
                "'\(option)' takes a whole number of days from 1 to 180; got '\(raw)'.", command: scanner.command)
        }
        guard days <= DeveloperTokenClaims.maximumLifetimeDays else {
            throw UsageError(
                "'\(option)' may be at most 180 days: Apple refuses developer tokens that live longer than six "
                    + "months; got \(days).", command: scanner.command)
        }
        return days
    }
}
