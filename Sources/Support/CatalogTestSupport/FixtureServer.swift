import Foundation

/// Runs Tests/Fixtures/catalog_fixture_server.py on 127.0.0.1 (loopback only) and knows its URL.
/// The script exits when its stdin closes, so it never outlives the process that started it.
///
/// Shared by the catalog, CLI, media and adapter tests and by partyradio-bench-catalog, which all
/// talk to the same fake Apple; so it is a plain target under Sources/Support, in no product.
public final class FixtureServer: @unchecked Sendable {
    public let port: Int
    private let process = Process()
    private let input = Pipe()

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// One server shared by the tests that only read from it.
    public static let shared: FixtureServer = {
        do { return try FixtureServer() } catch { fatalError("fixture server: \(error)") }
    }()

    /// Tests/Fixtures: the server script and, under `catalog/`, the responses it serves.
    public static var fixturesDirectory: URL {
        // This file is Sources/Support/CatalogTestSupport/FixtureServer.swift.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests")
            .appendingPathComponent("Fixtures")
    }

    /// The bytes of the canned response `catalog/<name>`.
    public static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixturesDirectory.appendingPathComponent("catalog").appendingPathComponent(name)))
    }

    /// Starts the server and waits for the `PORT <n>` line it prints once it listens.
    /// - Parameter options: the script's options (`--previews 127.0.0.1 --preview-rate 30000`, say).
    public init(options: [String] = []) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", Self.fixturesDirectory.appendingPathComponent("catalog_fixture_server.py").path, "0",
            ] + options
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

    /// Closes the server's stdin, terminates it and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
