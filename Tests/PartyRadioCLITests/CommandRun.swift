import CatalogTestSupport
import Foundation
import PartyRadioCLI
import Synchronization

/// What one in-process command run printed and returned.
struct CommandRun {
    var code: Int32
    var out: String
    var err: String

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any] ?? [:]
    }
}

/// Runs `partyradio <command> <arguments>` through ``PartyRadio/main(arguments:context:)``, the
/// catalog pointed at the fixture server and the state directory at a fresh one.
func runCLI(
    _ command: String, _ arguments: [String], server: FixtureServer = .shared, stateDir: String? = nil,
    environment extra: [String: String] = [:], clock: (@Sendable () -> Double)? = nil
) async -> CommandRun {
    let out = Mutex("")
    let err = Mutex("")
    let console = Console { stream, text in
        switch stream {
        case .out: out.withLock { $0 += text }
        case .err: err.withLock { $0 += text }
        }
    }
    var environment = [
        "PARTYRADIO_ITUNES_URL": server.baseURL, "PARTYRADIO_APPLE_MUSIC_URL": server.baseURL, "LANG": "en_US.UTF-8",
        "XDG_STATE_HOME": stateDir ?? makeTemporaryDirectory(),
    ]
    environment.merge(extra) { _, new in new }
    var context = CommandContext(environment: environment, console: console)
    if let clock { context.clock = clock }
    let code = await onOwnThread { [context] in PartyRadio.main(arguments: [command] + arguments, context: context) }
    return CommandRun(code: code, out: out.withLock { trimmed($0) }, err: err.withLock { trimmed($0) })
}

/// Runs `body` on a thread of its own: `main` blocks its caller while a catalog transfer runs
/// as a task, and must not block one of the few threads the tests' tasks share.
private func onOwnThread(_ body: @escaping @Sendable () -> Int32) async -> Int32 {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// The text without its last newline, so a single line compares as written.
private func trimmed(_ text: String) -> String {
    text.hasSuffix("\n") ? String(text.dropLast()) : text
}

/// The test process's own folder under the temporary directory: every scratch folder of these
/// tests is made inside it, and it is removed when the process exits, so runs leave nothing behind.
private let scratchRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-cli")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-tests-\(getpid())-cli")
        try? FileManager.default.removeItem(at: url)
    }
    return url
}()

func makeTemporaryDirectory() -> String {
    let path = scratchRoot.appendingPathComponent("partyradio-cli-\(UUID().uuidString)").path
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
