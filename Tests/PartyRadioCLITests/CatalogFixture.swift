import Foundation
import PartyRadioCLI
import Synchronization

/// Runs Tests/Fixtures/catalog_fixture_server.py on 127.0.0.1 (loopback only). The script exits
/// when its stdin closes, so it never outlives the test process.
final class CatalogFixture: @unchecked Sendable {
    let port: Int
    private let process = Process()
    private let input = Pipe()

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static let shared: CatalogFixture = {
        do { return try CatalogFixture() } catch { fatalError("fixture server: \(error)") }
    }()

    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
    }

    init() throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.fixtures.appendingPathComponent("catalog_fixture_server.py").path, "0"]
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
}

/// What one in-process command run printed and returned.
struct CommandRun {
    var code: Int32
    var out: String
    var err: String

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any] ?? [:]
    }
}

func runCatalog(
    _ command: String, _ arguments: [String], server: CatalogFixture = .shared, stateDir: String? = nil,
    environment extra: [String: String] = [:]
) async -> CommandRun {
    let out = Mutex<[String]>([])
    let err = Mutex<[String]>([])
    let console = CatalogConsole(
        out: { text in out.withLock { $0.append(text) } }, err: { text in err.withLock { $0.append(text) } })
    var environment = [
        "PARTYRADIO_ITUNES_URL": server.baseURL, "PARTYRADIO_APPLE_MUSIC_URL": server.baseURL, "LANG": "en_US.UTF-8",
        "XDG_STATE_HOME": stateDir ?? makeTemporaryDirectory(),
    ]
    environment.merge(extra) { _, new in new }
    let code = await CatalogCommands.run(command, arguments, environment: environment, console: console)
    return CommandRun(
        code: code, out: out.withLock { $0.joined(separator: "\n") }, err: err.withLock { $0.joined(separator: "\n") })
}

func makeTemporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-cli-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A MusicKit-style key (PKCS#8 PEM, P-256) made with the openssl tool.
func makeP8Key(curve: String = "P-256") throws -> String {
    let path = makeTemporaryDirectory() + "/AuthKey_KEY1234567.p8"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)", "-out", path,
    ]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    return path
}
