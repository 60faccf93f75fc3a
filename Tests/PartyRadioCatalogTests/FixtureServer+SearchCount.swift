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

/// The test process's own folder under the temporary directory: every scratch folder of these
/// tests is made inside it, and it is removed when the process exits, so runs leave nothing behind.
private let scratchRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-catalog")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-catalog")
        try? FileManager.default.removeItem(at: url)
    }
    return url
}()

/// A fresh temporary directory for one test's state.
func temporaryDirectory() -> String {
    let path = scratchRoot.appendingPathComponent("partyradio-catalog-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
