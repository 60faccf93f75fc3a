import Foundation
import PartyRadioCatalog
import PartyRadioCatalog

/// Runs Tests/Fixtures/catalog_fixture_server.py on 127.0.0.1 (loopback only) and knows its URL.
/// The script exits when its stdin closes, so it never outlives the test process.
final class FixtureServer: @unchecked Sendable {
    let port: Int
    private let process: Process
    private let input: Pipe

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// One server shared by the tests that only read from it.
    static let shared: FixtureServer = {
        do { return try FixtureServer() } catch { fatalError("fixture server: \(error)") }
    }()

    static var fixturesDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent("catalog").appendingPathComponent(name)))
    }

    init() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.fixturesDirectory.appendingPathComponent("catalog_fixture_server.py").path, "0",
        ]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else { throw CocoaError(.fileReadCorruptFile) }
        self.port = port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

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
