import CatalogTestSupport
import Foundation
import PartyRadioCatalog

extension FixtureServer {
    /// How many /search requests with `term` the server has seen.
    func searchCount(_ term: String) async throws -> Int {
        let encoded = term.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? term
        let response = try await TestHTTP.client.get(HTTPRequest(url: "\(baseURL)/_count?term=\(encoded)"))
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return object?["count"] as? Int ?? -1
    }
}

/// One client for the tests' own requests to the fixture server (the count endpoint).
enum TestHTTP {
    static let client = HTTPClient()
}

/// A fresh temporary directory for one test's state.
func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-catalog-\(UUID().uuidString)")
        .path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
