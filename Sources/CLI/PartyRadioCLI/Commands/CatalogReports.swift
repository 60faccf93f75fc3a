import Foundation
import PartyRadioCatalog

/// The catalog commands' JSON (stable keys; missing values are null).
enum CatalogReports {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

struct SearchReport: Encodable {
    var source: String
    var term: String
    var country: String
    var limit: Int
    var explicit: Bool
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    /// Only with --apple-music; the synthesized encoding leaves the key out when nil.
    var playlists: [CatalogPlaylist]?
    var skipped: [String]
    var notices: [String]
}

struct LookupReport: Encodable {
    var ids: [String]
    var country: String
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    var missing: [String]
    var notices: [String]
}

struct ChartsReport: Encodable {
    var country: String
    var limit: Int
    var cached: Bool
    var ageSeconds: Int
    var count: Int
    var tracks: [CatalogTrack]
    var skipped: [String]
    var notices: [String]
}

struct TokenReport: Encodable {
    var token: String
    var teamID: String
    var keyID: String
    var issuedAt: Int
    var expiresAt: Int
    var expires: String
}
