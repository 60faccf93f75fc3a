import Foundation
import Synchronization
import Testing

/// The Debian package: built by scripts/package (lintian clean), installed with dpkg into a
/// throwaway root where no Swift toolchain can be seen, and run there — a station and a
/// listener on a namespace LAN, and the station unit's own ExecStart as an unprivileged user.
@Suite(
    "Debian package", .serialized,
    .enabled(if: Testbed.isRoot, "installing and network namespaces need root"))
struct PackageLANTests {
    static let sandbox = Testbed.repoRoot.appendingPathComponent("scripts/toolchain-free.sh")
        .path

    @Test("Installed where no toolchain is visible: --version, help, a station and a listener, the unit verified")
    func installedWithoutToolchain() throws {
        let package = try Self.builtPackage()
        #expect(package.exit == 0, "scripts/package: \(package.stderr.suffix(3000))")
        let deb = package.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb))

        let root = "/tmp/partyradio-deb-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let install = try Self.command([Self.sandbox, "install", root, deb], timeout: 300)
        #expect(install.exit == 0, "dpkg -i: \(install.stdout) \(install.stderr)")

        // No toolchain: no swift on the PATH, its folder empty, no Swift library in the binary.
        let look = try Self.inRoot(
            root,
            [
                "/bin/sh", "-c",
                "command -v swift; ls -A \(Self.toolchain()) /usr/lib/swift 2>/dev/null; ldd /usr/bin/partyradio",
            ])
        #expect(look.exit == 0)
        #expect(
            !look.stdout.contains("bin/swift") && !look.stdout.contains("swift-") && !look.stdout.contains("libswift"))
        // libmpv is loaded only to play (dlopen), so the binary does not name it; the package depends on it.
        #expect(!look.stdout.contains("libFoundation") && !look.stdout.contains("libmpv"))
        let fields = try Self.command(["/usr/bin/dpkg-deb", "--field", deb, "Depends"], timeout: 60)
        #expect(fields.stdout.contains("libmpv2"), "Depends: \(fields.stdout)")

        let version = try Self.inRoot(root, ["partyradio", "--version"])
        #expect(version.exit == 0 && version.stdout.hasPrefix("partyradio "))
        let help = try Self.inRoot(root, ["partyradio", "stations", "--help"])
        #expect(help.exit == 0 && help.stdout.contains("USAGE: partyradio stations"))
        let manual = try Self.inRoot(
            root, ["/bin/sh", "-c", "MANWIDTH=100 man partyradio | grep -c 'PARTYRADIO LISTEN'"])
        #expect(manual.exit == 0 && manual.stdout.hasPrefix("1"), "\(manual.stderr)")

        // The units: systemd-analyze verify (it also checks that ExecStart's binary and the man page exist).
        let unit = "/lib/systemd/system/partyradio-dj.service"
        let speakerUnit = "/lib/systemd/system/partyradio-speaker.service"
        for each in [unit, speakerUnit] {
            let verify = try Self.inRoot(root, ["systemd-analyze", "verify", each])
            #expect(verify.exit == 0 && verify.stderr.isEmpty, "\(each): \(verify.stdout) \(verify.stderr)")
        }

        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // The station as the unit starts it: its ExecStart and Environment lines, the state
        // directory systemd would make, the name from /etc/partyradio/config, as nobody with no
        // new privileges.
        let unitFile = try Self.inRoot(root, ["cat", unit])
        let (execStart, environment) = try Self.service(unitFile.stdout)
        let state = lan.stateDir("dj")
        chown(state, 65534, 65534)
        let command = execStart.map { $0.replacingOccurrences(of: "${STATE_DIRECTORY}", with: state) }
        let dj = try lan.spawn(
            host: 1,
            [Self.sandbox, "run", root, "/bin/sh", "-c", Self.configured(), "sh"] + ["env"]
                + environment.map { "\($0.key)=\($0.value)" } + command)
        defer { dj.kill() }
        let published = try dj.waitForEvent(timeout: .seconds(20), "station_published") {
            $0.name == "station_published"
        }
        #expect(published.string("station") == "Debian Rooftop")

        // A listener on another host, with audio through mpv's null output.
        let listener = try lan.spawn(
            host: 2,
            [
                Self.sandbox, "run", root, "/usr/bin/partyradio", "listen", "Debian", "--json-events",
                "--audio-driver", "null", "--state-dir", lan.stateDir("listener"),
            ])
        defer { listener.kill() }
        let tuned = try listener.waitForEvent(timeout: .seconds(20), "tuned_in") { $0.name == "tuned_in" }
        #expect((tuned["station"] as? [String: Any])?["name"] as? String == "Debian Rooftop")
        try dj.waitForEvent(timeout: .seconds(10), "listener joined") { $0.name == "listener_joined" }

        // A speaker as its unit starts it, on a third host: its name and room from the same config
        // file, its own state directory, as nobody; the DJ lists it among its speakers.
        let speakerFile = try Self.inRoot(root, ["cat", speakerUnit])
        let (speakerStart, speakerEnvironment) = try Self.service(speakerFile.stdout)
        let speakerState = lan.stateDir("speaker")
        chown(speakerState, 65534, 65534)
        // (Each run of the sandbox has a layer of its own: the config is written in this one too.)
        let speaker = try lan.spawn(
            host: 3,
            [Self.sandbox, "run", root, "/bin/sh", "-c", Self.configured(), "sh"] + ["env"]
                + speakerEnvironment.map { "\($0.key)=\($0.value)" }
                + speakerStart.map { $0.replacingOccurrences(of: "${STATE_DIRECTORY}", with: speakerState) })
        defer { speaker.kill() }
        let listed = try? dj.waitForEvent(timeout: .seconds(20), "the speaker listed") { event in
            (event["speakers"] as? [[String: Any]])?.contains {
                $0["name"] as? String == "Porch" && $0["room"] as? String == "Outside"
            } == true
        }
        #expect(
            listed?.name == "speakers",
            "the speaker's unit: \(speaker.text(.stdout).suffix(1500)) \(speaker.text(.stderr).suffix(1500))")
        #expect(FileManager.default.fileExists(atPath: speakerState + "/speaker.key"), "the speaker's own state")

        // A live station from the unit: `live = pulse` in /etc/partyradio/config, with a system-wide
        // PulseAudio (its system mode) as README's drop-in sets it up: the dynamic user has no session
        // sound server, so `Environment=PULSE_SERVER=…` names the machine's, and `Group=pulse-access`
        // lets it in. PulseAudio checks that group as the primary group or /etc/group's members, so a
        // supplementary one (`SupplementaryGroups=`) is refused: the DJ stops with the fix. Let in, the
        // DJ makes the station's sink there, captures it and sends frames.
        dj.kill()
        _ = dj.wait(timeout: .seconds(10))
        let (sound, soundEnvironment) = try lan.startSoundServer(host: 1, systemMode: true)
        defer { sound.kill() }
        let group = try #require(
            getgrnam("pulse-access")?.pointee.gr_gid, "the pulseaudio package makes the group pulse-access")
        let liveState = lan.stateDir("dj-live")
        chown(liveState, 65534, 65534)
        func liveUnit(_ groups: String) -> [String] {
            [Self.sandbox, "run", root, "/bin/sh", "-c", Self.configured("live = pulse\n", groups: groups), "sh"]
                + ["env"] + environment.merging(soundEnvironment) { $1 }.map { "\($0.key)=\($0.value)" }
                + execStart.map { $0.replacingOccurrences(of: "${STATE_DIRECTORY}", with: liveState) }
        }
        let refused = try lan.run(host: 1, liveUnit("--regid=65534 --groups=\(group)"))
        #expect(
            refused.exit != 0 && refused.stderr.contains("refused this user")
                && refused.stderr.contains("Group=pulse-access"),
            "a supplementary pulse-access: \(refused.exit) \(refused.stderr.suffix(1500))")
        let live = try lan.spawn(host: 1, liveUnit("--regid=\(group) --clear-groups"))
        defer { live.kill() }
        let onAir = try? live.waitForEvent(timeout: .seconds(20), "live frames sent") {
            $0.name == "live_sent" && ($0.int("frames") ?? 0) > 0
        }
        #expect(onAir != nil, "the live unit: \(live.text(.stdout).suffix(1500)) \(live.text(.stderr).suffix(1500))")
        // pactl as a member too: the system server lets no one else in, root included.
        let sinks = try lan.run(
            host: 1,
            [
                "setpriv", "--reuid=65534", "--regid=\(group)", "--clear-groups", "/usr/bin/pactl", "list", "short",
                "sinks",
            ],
            env: soundEnvironment.merging(["HOME": "/nonexistent"]) { $1 }
        ).stdout
        #expect(sinks.contains("partyradio_debian_rooftop"), "the station's sink: \(sinks)")
        #expect(try Testbed.auditRootNamespace().isEmpty)
    }

    /// A shell script that writes /etc/partyradio/config for the units (the station's name and the
    /// speaker's, nothing played, and `extra` lines; a whole file, renamed into place) and runs its
    /// arguments as nobody with no new privileges, as the units' dynamic user, in `groups` (setpriv's
    /// options: the primary group and the supplementary ones).
    static func configured(_ extra: String = "", groups: String = "--regid=65534 --clear-groups") -> String {
        "printf 'name = Debian Rooftop\\nno-audio = true\\nspeaker-name = Porch\\nroom = Outside\\n"
            + "audio-driver = null\\n\(extra)' > /etc/partyradio/config.new "
            + "&& mv /etc/partyradio/config.new /etc/partyradio/config "
            + "&& exec setpriv --reuid=65534 \(groups) --no-new-privs \"$@\""
    }

    /// The ExecStart words and Environment assignments of a unit file.
    static func service(_ text: String) throws -> (execStart: [String], environment: [String: String]) {
        var execStart: [String] = []
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("ExecStart=") {
                execStart = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
            } else if line.hasPrefix("Environment="),
                let equals = line.dropFirst("Environment=".count).firstIndex(of: "=")
            {
                let assignment = line.dropFirst("Environment=".count)
                environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            }
        }
        guard !execStart.isEmpty else { throw TestbedError("no ExecStart in the unit: \(text)") }
        return (execStart, environment)
    }

    /// The toolchain's folder as `which swift` finds it (what the sandbox hides).
    static func toolchain() -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/swift") {
            let real = URL(fileURLWithPath: "\(folder)/swift").resolvingSymlinksInPath()
            return real.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        }
        return "/opt/swift"
    }

    /// Runs `arguments` in the installed root (outside any testbed host: nothing here touches the network).
    static func inRoot(_ root: String, _ arguments: [String]) throws -> (exit: Int32, stdout: String, stderr: String) {
        try command([sandbox, "run", root] + arguments, timeout: 60)
    }

    /// scripts/package's result: the test command builds it in the background while the other
    /// tests run and names its folder in PARTYRADIO_PACKAGE_RESULT (exit, stdout, stderr); alone,
    /// the test builds it here.
    static func builtPackage() throws -> (exit: Int32, stdout: String, stderr: String) {
        guard let folder = ProcessInfo.processInfo.environment["PARTYRADIO_PACKAGE_RESULT"] else {
            return try command([Testbed.repoRoot.appendingPathComponent("scripts/package").path], timeout: 1800)
        }
        func read(_ name: String) -> String? { try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) }
        let deadline = Date().addingTimeInterval(1800)
        while read("exit") == nil && Date() < deadline { Thread.sleep(forTimeInterval: 1) }
        let exit = read("exit").flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? -1
        return (exit, read("stdout") ?? "", read("stderr") ?? "the background build did not finish in 30 minutes")
    }

    static func command(_ arguments: [String], timeout: Double) throws -> (exit: Int32, stdout: String, stderr: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.currentDirectoryURL = Testbed.repoRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let timer = DispatchSource.makeTimerSource()
        timer.schedule(deadline: .now() + timeout)
        timer.setEventHandler { process.terminate() }
        timer.resume()
        defer { timer.cancel() }
        let errData = Mutex(Data())
        let reader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting || !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            errData.withLock { String(decoding: $0, as: UTF8.self) }
        )
    }
}
