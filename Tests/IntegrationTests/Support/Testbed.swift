import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A LAN of network namespaces for one integration test, built and torn down by `scripts/testbed.sh`.
///
/// Every host has its own network and mount namespace, D-Bus system bus and avahi-daemon, so the
/// real `partyradio` binary discovers and multicasts exactly as on a LAN — and never on the
/// machine's own network (rule one, docs/TESTBED.md). The namespaces go away in `shutdown()`,
/// which `deinit` also calls, so a test that fails half-way still cleans up.
///
/// Hosts are numbered from 1. Building one needs root; gate suites with
/// `.enabled(if: Testbed.isRoot, ...)` so they skip elsewhere.
final class Testbed: Sendable {
    /// The testbed's name; its hosts' namespaces are `<name>1`, `<name>2`, ….
    let name: String
    /// The number of hosts.
    let hostCount: Int
    /// The families of the LAN's addresses.
    let family: IPFamily

    /// Which addresses the hosts get (`testbed.sh up --ip`).
    enum IPFamily: String, Sendable {
        /// 10.99.X.N/24 only, IPv6 off (the default).
        case v4
        /// fd99:X::N/64 and link-local only: no IPv4 address at all.
        case v6
        /// Both.
        case dual
    }
    private let isDown = Mutex(false)

    /// Builds a LAN of `hosts` hosts and waits until every host's avahi-daemon answers. First removes
    /// stale test testbeds: those tagged `Testbed.tag` whose test process has exited.
    /// - Parameters:
    ///   - hosts: how many hosts (1…50).
    ///   - name: the testbed's name (1–12 of [a-z0-9], starting and ending with a letter); by default
    ///     one that is unique on this machine.
    ///   - ip: the families of the hosts' addresses.
    ///   - timeout: how long `up` may take before it is killed.
    ///   - subnets: 2 puts hosts 1…⌈hosts/2⌉ and the rest on two subnets joined by a router, which
    ///     is one more host (`hosts + 1`) and forwards unicast only (`up --subnets 2`).
    init(
        hosts: Int, name: String? = nil, ip: IPFamily = .v4, timeout: Duration = .seconds(90), subnets: Int = 1
    ) throws {
        // Leftovers of test runs that crashed before their deinit could run. Only ours (by tag):
        // a testbed made by hand from a shell that has since exited is stale too, but in use.
        _ = try? Self.script(["down-all", "--stale", "--tag", Self.tag], timeout: .seconds(60))
        // Our own name, so that whatever `up` leaves behind when it fails or times out can be removed.
        let name = name ?? Self.uniqueName()
        do {
            let routed = subnets == 1 ? [] : ["--subnets", String(subnets)]
            let result = try Self.script(
                ["up", String(hosts), "--name", name, "--tag", Self.tag, "--ip", ip.rawValue] + routed, timeout: timeout
            )
            guard result.exit == 0 else {
                throw TestbedError("testbed.sh up \(hosts) failed (exit \(result.exit)): \(result.stderr)")
            }
        } catch {
            _ = try? Self.script(["down", name], timeout: .seconds(60))
            throw error
        }
        self.name = name
        self.hostCount = subnets == 1 ? hosts : hosts + 1
        self.family = ip
    }

    private static let counter = Mutex(0)

    /// "t<pid>n<k>h": unique among live processes, and within this one for 100 testbeds at a time.
    private static func uniqueName() -> String {
        let k = counter.withLock { value in
            defer { value = (value + 1) % 100 }
            return value
        }
        return "t\(getpid())n\(k)h"
    }

    deinit { shutdown() }

    /// Builds a LAN, runs `body` on it and tears it down however `body` ends. Prefer this over a
    /// bare `init`: ARC may end an unused testbed's life (and so the LAN) before the test's last line.
    static func withLAN<T>(hosts: Int, ip: IPFamily = .v4, _ body: (Testbed) throws -> T) throws -> T {
        let testbed = try Testbed(hosts: hosts, ip: ip)
        defer { testbed.shutdown() }
        return try withExtendedLifetime(testbed) { try body(testbed) }
    }

    // MARK: Running things on hosts

    /// Runs `args` on `host` to completion. `args[0]` is looked up in PATH unless absolute.
    /// - Returns: the exit status (128 + signal when killed) and everything written to stdout and stderr.
    /// - Throws: `TestbedError` if it cannot start or takes longer than `timeout` (it is killed then).
    @discardableResult
    func run(host: Int, _ args: [String], env: [String: String] = [:], timeout: Duration = .seconds(30)) throws -> (
        exit: Int32, stdout: String, stderr: String
    ) {
        try Self.script(["run", name, String(try checked(host))] + args, env: env, timeout: timeout)
    }

    /// Starts `args` on `host` and returns at once. The handle's PID is the command's own (the
    /// script execs into it), so `kill(signal:)` reaches the command itself.
    /// - Parameters:
    ///   - env: variables added to this process's environment for the command.
    ///   - stdin: give the command a pipe for ``TestbedProcess/send(_:)`` instead of /dev/null.
    func spawn(host: Int, _ args: [String], env: [String: String] = [:], stdin: Bool = false) throws -> TestbedProcess {
        try TestbedProcess(
            host: host, arguments: args,
            launch: [Self.scriptPath, "run", name, String(try checked(host))] + args, env: env, owner: self,
            stdin: stdin)
    }

    // MARK: Faults

    /// Which way `loss(host:percent:direction:)` drops packets on the host's eth0.
    enum LossDirection: String, Sendable {
        case inbound = "--in"
        case outbound = "--out"
        case both = "--both"
    }

    /// Drops `percent` (0…100) of the packets on `host`'s eth0, at random; 0 removes the loss.
    /// Each call replaces the previous setting of that host.
    func loss(host: Int, percent: Double, direction: LossDirection = .inbound) throws {
        try scriptOK(["loss", name, String(try checked(host)), String(format: "%g", percent), direction.rawValue])
    }

    /// Pulls `host`'s cable: its switch port goes down, its eth0 loses carrier, its address stays.
    func linkDown(host: Int) throws { try scriptOK(["down-link", name, String(try checked(host))]) }

    /// Plugs `host`'s cable back in.
    func linkUp(host: Int) throws { try scriptOK(["up-link", name, String(try checked(host))]) }

    /// Stops `host`'s avahi-daemon (clients on that host see the daemon go away).
    func stopAvahi(host: Int) throws { try scriptOK(["stop-avahi", name, String(try checked(host))]) }

    /// Starts `host`'s avahi-daemon again and waits until it answers.
    func startAvahi(host: Int) throws { try scriptOK(["start-avahi", name, String(try checked(host))]) }

    // MARK: Facts

    /// `host`'s name: its network namespace and its mDNS host name (`<name>.local`).
    func hostName(host: Int) throws -> String { "\(name)\(try checked(host))" }

    /// `host`'s address on the LAN: IPv4 ("10.99.12.1") unless the LAN is IPv6-only ("fd99:12::1").
    func ip(host: Int) throws -> String {
        try scriptOK(["ip", name, String(try checked(host))]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `host`'s IPv6 (unique local) address, e.g. "fd99:12::1"; throws on an IPv4-only LAN.
    func ipv6(host: Int) throws -> String {
        try scriptOK(["ip", name, String(try checked(host)), "--6"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Tears the LAN down: kills every process in its namespaces and deletes them. Idempotent.
    func shutdown() {
        let first = isDown.withLock { down in
            defer { down = true }
            return !down
        }
        guard first else { return }
        _ = try? Self.script(["down", name], timeout: .seconds(60))
    }

    /// Rule one, checked: the processes of any testbed host found in the root network namespace,
    /// plus any avahi-daemon there, one line each. Empty is the only good answer.
    static func auditRootNamespace() throws -> [String] {
        let result = try script(["audit"], timeout: .seconds(60))
        return result.stdout.split(separator: "\n").map(String.init)
    }

    // MARK: Locations

    /// Marks the testbeds made by integration tests, for the stale clean-up.
    static let tag = "swift-test"

    /// Whether this process runs as root, which building namespaces needs.
    static var isRoot: Bool { geteuid() == 0 }

    /// The repository root: the nearest folder above this file that holds Package.swift.
    static let repoRoot: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
                return dir
            }
            dir.deleteLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    /// scripts/testbed.sh in this repository.
    static var scriptPath: String { repoRoot.appendingPathComponent("scripts/testbed.sh").path }

    /// The `partyradio` binary under test: `$PARTYRADIO_BIN`, else `.build/debug/partyradio`.
    static var partyradioBinary: String {
        if let bin = ProcessInfo.processInfo.environment["PARTYRADIO_BIN"], !bin.isEmpty { return bin }
        return repoRoot.appendingPathComponent(".build/debug/partyradio").path
    }

    // MARK: Private

    private func checked(_ host: Int) throws -> Int {
        guard (1...hostCount).contains(host) else {
            throw TestbedError("testbed \(name) has hosts 1...\(hostCount), not \(host)")
        }
        return host
    }

    @discardableResult
    private func scriptOK(_ args: [String]) throws -> String {
        let result = try Self.script(args, timeout: .seconds(60))
        guard result.exit == 0 else {
            throw TestbedError(
                "testbed.sh \(args.joined(separator: " ")) failed (exit \(result.exit)): \(result.stderr)")
        }
        return result.stdout
    }

    /// Runs testbed.sh with `args` to completion, collecting its output.
    private static func script(_ args: [String], env: [String: String] = [:], timeout: Duration) throws -> (
        exit: Int32, stdout: String, stderr: String
    ) {
        let process = try TestbedProcess(host: 0, arguments: args, launch: [scriptPath] + args, env: env)
        guard let status = process.wait(timeout: timeout) else {
            process.kill(signal: SIGTERM)  // `up` traps it and tears down what it built
            if process.wait(timeout: .seconds(10)) == nil {
                process.kill(signal: SIGKILL)
                _ = process.wait(timeout: .seconds(5))
            }
            throw TestbedError(
                "testbed.sh \(args.joined(separator: " ")) timed out after \(timeout); stderr: \(process.text(.stderr))"
            )
        }
        return (status, process.text(.stdout), process.text(.stderr))
    }
}

/// A command running on a testbed host (or the testbed script itself), with its output collected
/// line by line as it arrives.
final class TestbedProcess: @unchecked Sendable {
    // @unchecked: `process` is configured in init and afterwards only read (processIdentifier,
    // isRunning); everything that changes lives in `shared`, behind a Mutex.

    /// Which output stream to read.
    enum Stream: Sendable {
        case stdout, stderr
        fileprivate var index: Int { self == .stdout ? 0 : 1 }
    }

    /// The host it runs on (0 for the script itself).
    let host: Int
    /// The command as given.
    let arguments: [String]
    /// Keeps the LAN up while a process on it is still referenced.
    private let owner: Testbed?
    private let process = Process()
    private let shared = Shared()

    /// What the termination handler and the reader threads share with callers.
    private final class Shared: Sendable {
        struct State {
            var buffers: [Data] = [Data(), Data()]  // stdout, stderr: everything read so far
            var ended: [Bool] = [false, false]  // stdout, stderr reached end of file
            var exitStatus: Int32?
        }
        let state = Mutex(State())
        let exited = DispatchGroup()
        let drained = DispatchGroup()
    }

    /// The write end of the command's stdin, when it was spawned with one.
    private let input: FileHandle?

    init(
        host: Int, arguments: [String], launch: [String], env: [String: String], owner: Testbed? = nil,
        stdin: Bool = false
    ) throws {
        self.host = host
        self.arguments = arguments
        self.owner = owner
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = launch
        // Never the machine's own session bus: a node would offer its MPRIS player there. A test
        // that wants one starts a private bus inside its host and passes its address in `env`.
        var inherited = ProcessInfo.processInfo.environment
        inherited["DBUS_SESSION_BUS_ADDRESS"] = nil
        process.environment = inherited.merging(env) { _, new in new }
        if stdin {
            let pipe = Pipe()
            process.standardInput = pipe
            input = pipe.fileHandleForWriting
        } else {
            process.standardInput = FileHandle.nullDevice
            input = nil
        }
        let pipes = [Pipe(), Pipe()]
        process.standardOutput = pipes[0]
        process.standardError = pipes[1]
        let shared = self.shared
        shared.exited.enter()
        process.terminationHandler = { process in
            let status =
                process.terminationReason == .uncaughtSignal
                ? 128 + process.terminationStatus : process.terminationStatus
            shared.state.withLock { $0.exitStatus = status }
            shared.exited.leave()
        }
        do {
            try Self.launchWithSignalsUnblocked(process)
        } catch {
            shared.exited.leave()
            throw TestbedError("cannot start \(launch.joined(separator: " ")): \(error)")
        }
        for (index, pipe) in pipes.enumerated() {
            try? pipe.fileHandleForWriting.close()
            let reader = pipe.fileHandleForReading
            shared.drained.enter()
            Thread.detachNewThread {
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    shared.state.withLock { $0.buffers[index].append(chunk) }
                }
                try? reader.close()
                shared.state.withLock { $0.ended[index] = true }
                shared.drained.leave()
            }
        }
    }

    /// Foundation's Process hands the child the calling thread's signal mask, and Dispatch's and
    /// Swift Testing's threads block nearly everything (swift-corelibs-foundation#4772): the script
    /// could not trap SIGTERM and clean up. So the launch happens on a fresh thread with an empty mask.
    private static func launchWithSignalsUnblocked(_ process: Process) throws {
        final class Launch: @unchecked Sendable {  // the Process is handed over, not shared
            let process: Process
            let outcome = Mutex<(any Error)?>(nil)
            let done = DispatchSemaphore(value: 0)
            init(process: Process) { self.process = process }
        }
        let launch = Launch(process: process)
        Thread.detachNewThread {
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            do {
                try launch.process.run()
            } catch {
                launch.outcome.withLock { $0 = error }
            }
            launch.done.signal()
        }
        launch.done.wait()
        if let error = launch.outcome.withLock({ $0 }) { throw error }
    }

    deinit {
        if process.isRunning {
            kill(signal: SIGKILL)
        }
    }

    /// The command's PID.
    var pid: Int32 { process.processIdentifier }

    /// Whether it is still running.
    var isRunning: Bool { shared.state.withLock { $0.exitStatus == nil } }

    /// The lines written to `stream` so far; an unfinished last line only once the stream has ended.
    func readLines(_ stream: Stream = .stdout) -> [String] {
        let (data, ended) = shared.state.withLock { ($0.buffers[stream.index], $0.ended[stream.index]) }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        if !ended || lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Everything written to `stream` so far.
    func text(_ stream: Stream) -> String {
        String(decoding: shared.state.withLock { $0.buffers[stream.index] }, as: UTF8.self)
    }

    /// Waits until a line of `stream` contains `needle` and returns the first such line at index
    /// `startingAt` or later.
    /// - Throws: `TestbedError` with the output so far if none comes within `timeout` or the stream ends.
    @discardableResult
    func waitForLine(
        containing needle: String, timeout: Duration = .seconds(10), stream: Stream = .stdout, startingAt: Int = 0
    ) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let finished = shared.state.withLock { $0.ended[stream.index] }  // before reading: no line is missed
            let lines = readLines(stream)
            if startingAt < lines.count, let line = lines[startingAt...].first(where: { $0.contains(needle) }) {
                return line
            }
            if finished || ContinuousClock.now >= deadline {
                throw TestbedError(
                    "\(finished ? "output ended" : "timed out after \(timeout)") waiting for a line with "
                        + "'\(needle)' from host \(host) \(arguments): stdout: \(text(.stdout)) stderr: \(text(.stderr))"
                )
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Writes one line to the command's stdin (spawned with `stdin: true`).
    func send(_ line: String) {
        try? input?.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Sends `signal` to the command.
    func kill(signal: Int32 = SIGTERM) {
        let pid = self.pid
        if pid > 0, isRunning {
            #if canImport(Glibc)
                _ = Glibc.kill(pid, signal)
            #else
                _ = Darwin.kill(pid, signal)
            #endif
        }
    }

    /// Waits for the command to end and for its output to be read.
    /// - Returns: its exit status, 128 + the signal if a signal ended it.
    @discardableResult
    func wait() -> Int32 {
        shared.exited.wait()
        _ = shared.drained.wait(timeout: .now() + 2)  // a child that inherited the pipe may hold it open
        return shared.state.withLock { $0.exitStatus ?? -1 }
    }

    /// Like `wait()`, but gives up after `timeout` and returns nil.
    func wait(timeout: Duration) -> Int32? {
        guard shared.exited.wait(timeout: .now() + timeout.seconds) == .success else { return nil }
        _ = shared.drained.wait(timeout: .now() + 2)
        return shared.state.withLock { $0.exitStatus }
    }
}

/// A testbed step that went wrong, with what the script said.
struct TestbedError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
