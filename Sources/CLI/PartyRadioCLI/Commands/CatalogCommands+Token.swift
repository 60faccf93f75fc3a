import Foundation
import PartyRadioCatalog

extension CatalogCommands {
    /// `partyradio token`: an Apple Music developer token (ES256 JWT) from a MusicKit key.
    static func token(_ options: Command.TokenOptions, context: CommandContext) -> Int32 {
        let failure: String?
        do {
            try tokenBody(options, context: context)
            failure = nil
        } catch { failure = message(error) }
        return finish("token", failure, console: context.console)
    }

    private static func tokenBody(_ options: Command.TokenOptions, context: CommandContext) throws {
        let key = try ES256Key(contentsOfFile: options.keyPath)
        let claims = DeveloperTokenClaims(
            teamID: options.teamID, keyID: options.keyID, issuedAt: Int(context.clock()),
            lifetimeSeconds: options.lifetimeDays * 86_400)
        let token = try key.developerToken(claims)
        let expiry = Date(timeIntervalSince1970: Double(claims.expiresAt)).ISO8601Format()
        if options.json {
            context.console.out(CatalogJSON.token(token, claims: claims, expires: expiry).rendered)
        } else {
            context.console.out(token)
            context.console.err(
                "Developer token for team \(claims.teamID), key \(claims.keyID), valid until \(expiry).")
        }
    }
}
