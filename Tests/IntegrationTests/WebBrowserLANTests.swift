import Foundation
import Testing

/// The DJ's web page in a real browser (Debian's chromium, driven by Tests/Fixtures/web/browser.py
/// over Selenium) on other hosts of the namespace LAN (issue 9): a guest sees the track, votes,
/// requests and chats; another guest's vote arrives live; the next track appears after a skip;
/// the page reconnects after its host's cable is pulled; a browser listens in sync with the DJ's
/// trace and counts as a listener; the page's clock rules hold on made-up readings; the DJ's link gives the DJ's controls; and attacker-controlled titles, names
/// and chat stay text. Screenshots at phone and desktop width go to `.build/web-screenshots/`.
@Suite(
    "The web page in a browser on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: Browser.isAvailable, "needs Debian's chromium, chromium-driver and python3-selenium"))
struct WebBrowserLANTests {
    @Test("A guest votes, requests and chats; others see it live; skip, reconnect, listen, the DJ's page")
    func guestInTheBrowser() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop", playing: true, extra: ["--trace", lan.tracePath("dj")])
        let (url, djURL) = try lan.pageLinks(dj)
        let phone = try Browser(lan, host: 2, url: url, width: 360, name: "Ann")
        let desktop = try Browser(lan, host: 3, url: url, width: 1280, name: "Bob")
        defer {
            phone.quit()
            desktop.quit()
        }

        // Both see what plays.
        let title = try #require(dj.events.last { $0.name == "state" }.flatMap { Event.title($0) })
        #expect(try phone.command(["cmd": "state"])["title"] as? String == title)
        #expect(try desktop.command(["cmd": "state"])["station"] as? String == "Rooftop")
        // The page reads the state's numbers (docs/WEB.md): the track's length and the station position.
        let shown = try phone.command(["cmd": "state"])
        for field in ["elapsed", "total"] {
            #expect((shown[field] as? String)?.wholeMatch(of: /[0-9]+:[0-5][0-9]/) != nil, "\(field): \(shown)")
        }
        #expect(shown["total"] as? String != "0:00", "\(shown)")

        // The phone votes up; the desktop sees it arrive; the DJ counted it.
        _ = try phone.command(["cmd": "click", "name": "Vote up"])
        try dj.waitForEvent("the browser's vote") { $0.name == "vote_counted" && $0.int("up") == 1 }
        let live = try desktop.command(["cmd": "wait_vote", "up": 1, "down": 0, "timeout": 30])
        #expect(live["error"] == nil, "\(live)")
        // The CLI's vote is in the same tally, on both pages.
        let cli = try lan.partyradio(host: 3, ["vote", "down", "--station", "Rooftop"], role: "cli")
        #expect(cli.exit == 0, "\(cli.stderr)")
        for browser in [phone, desktop] {
            let both = try browser.command(["cmd": "wait_vote", "up": 1, "down": 1, "timeout": 30])
            #expect(both["error"] == nil, "\(both)")
        }

        // A request found by searching, and chat, seen on the other page.
        let request = try phone.command(["cmd": "request", "search": "blue hour", "pick": 0])
        #expect(request["refused"] as? Bool == false, "\(request)")
        try dj.waitForEvent("the browser's request") { $0.name == "request" }
        let seen = try desktop.command(["cmd": "wait_text", "text": "Blue Hour", "timeout": 30])
        #expect(seen["error"] == nil, "\(seen)")
        let requester = try desktop.command(["cmd": "wait_text", "text": "requested by Ann", "timeout": 30])
        #expect(requester["error"] == nil, "a guest's request shows as the DJ's pick: \(requester)")
        let chat = try desktop.command(["cmd": "chat", "text": "hello from the desktop"])
        #expect(chat["refused"] as? Bool == false, "\(chat)")
        #expect(
            try phone.command(["cmd": "wait_text", "text": "hello from the desktop", "timeout": 30])["error"] == nil)

        // Screenshots for the README, at phone and desktop width.
        let shots = Testbed.repoRoot.appendingPathComponent(".build/web-screenshots").path
        try? FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        _ = try phone.command(["cmd": "screenshot", "path": shots + "/web-phone.png", "full": true])
        _ = try desktop.command(["cmd": "screenshot", "path": shots + "/web-desktop.png", "full": false])
        #expect(FileManager.default.fileExists(atPath: shots + "/web-phone.png"))

        // The DJ skips (on its terminal): both pages show the next track.
        let mark = dj.events.count
        dj.send("next")
        let next = try dj.waitForEvent(after: mark, "the next track") {
            $0.name == "state" && $0.string("change") == "track"
        }
        let nextTitle = try #require(Event.title(next))
        for browser in [phone, desktop] {
            #expect(try browser.command(["cmd": "wait_text", "text": nextTitle, "timeout": 30])["error"] == nil)
        }

        // The phone's cable is pulled for a while; once back, it catches up by itself.
        try lan.linkDown(host: 2)
        Thread.sleep(forTimeInterval: 4)
        let whileDown = dj.events.count
        dj.send("next")
        let third = try dj.waitForEvent(after: whileDown, "a track while the phone is away") {
            $0.name == "state" && $0.string("change") == "track"
        }
        try lan.linkUp(host: 2)
        let back = try phone.command(["cmd": "wait_text", "text": try #require(Event.title(third)), "timeout": 30])
        #expect(back["error"] == nil, "the page did not reconnect: \(back)")

        // The page's clock rules, run in Chromium on made-up readings (as in WebKit and Firefox).
        try desktop.checkClockRules()
        // The desktop listens in the browser: it plays in sync with the DJ's trace, and counts.
        try desktop.checkListening(lan, seconds: 8)
        #expect(
            try desktop.evaluate("return window.partyradioListen.clockRttMs") as? Double != nil,
            "the page never read the DJ's clock")
        try dj.waitForEvent(after: mark, "the browser among the listeners") {
            $0.name == "listener_joined" && ($0.int("listeners") ?? 0) >= 1
        }

        // The DJ's link: the DJ's controls, which work.
        _ = try phone.command(["cmd": "open", "url": djURL])
        let beforeSkip = dj.events.count
        let skip = try phone.command(["cmd": "click", "name": "Skip"])
        #expect(skip["error"] == nil, "\(skip)")
        try dj.waitForEvent(after: beforeSkip, "skipped from the DJ's page") { $0.name == "track_skipped" }
        for browser in [phone, desktop] {
            let check = try browser.command(["cmd": "injection_check"])
            #expect(check["clean"] as? Bool == true, "\(check)")
        }
    }

    @Test("Titles, artists, guest names and chat that are attacks render as plain text")
    func untrustedTextStaysText() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let library = lan.stateDir("hostile-library")
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/web/hostile_library.py").path
        _ = try lan.run(host: 1, ["python3", script, library, "60"])
        let dj = try lan.startDJ(host: 1, name: "<b>Evil</b> \"FM\"", extra: ["--library", library])
        let url = try #require(try dj.waitForEvent("web_page") { $0.name == "web_page" }.string("url"))
        let hostileName = "<img src=x onerror=__pwned=1>"  // within the 32-character name limit
        let browser = try Browser(lan, host: 2, url: url, width: 360, name: hostileName)
        defer { browser.quit() }
        let state = try browser.command(["cmd": "state"])
        #expect(state["station"] as? String == "<b>Evil</b> \"FM\"")
        #expect(state["title"] as? String == "<script>window.__pwned=1</script>")
        #expect(state["artist"] as? String == "<img src=x onerror=\"window.__pwned=1\">")
        let chat = try browser.command([
            "cmd": "chat", "text": "<script>window.__pwned=1</script> javascript:window.__pwned=1",
        ])
        #expect(chat["refused"] as? Bool == false, "\(chat)")
        #expect(
            try browser.command(["cmd": "wait_text", "text": "javascript:window.__pwned=1", "timeout": 30])["error"]
                == nil)
        // The javascript: title plays next: still text, never a link.
        dj.send("next")
        #expect(
            try browser.command(["cmd": "wait_text", "text": "Evil \"Quotes\" & <b>bold</b>", "timeout": 30])["error"]
                == nil)
        let check = try browser.command(["cmd": "injection_check"])
        #expect(check["clean"] as? Bool == true && check["pwned"] as? Bool == false, "\(check)")
        let after = try browser.command(["cmd": "state"])
        #expect((after["csp_errors"] as? [Any])?.isEmpty ?? true, "\(after)")
        let shown = String(describing: after["you"] ?? "") + String(describing: after["chat"] ?? "")
        #expect(shown.contains(hostileName), "\(after)")
    }
    /// The DJ's page sets its speakers (issue 29): a speaker and its room appear on the DJ's page
    /// only (not on a guest's); the volume slider moved from the keyboard, the room's mute button and
    /// the delay field reach the speaker, which says so; the page shows what the speaker reports.
    @Test("The DJ's page lists its speakers and sets them: a volume slider, a room's mute, a delay trim")
    func djPageSetsSpeakers() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Rooftop")
        let (url, djURL) = try lan.pageLinks(dj)
        let speaker = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "speaker", "--name", "Kitchen", "--room", "Downstairs", "--json-events",
                "--no-audio", "--state-dir", lan.stateDir("speaker2"),
            ])
        defer { speaker.kill() }
        // A speaker's name and room are its own words: one names itself as an attack.
        let hostileName = "<img src=x onerror=__pwned=1>"
        let hostileRoom = "<script>__pwned=1</script>"
        let hostile = try lan.spawn(
            host: 2,
            [
                Testbed.partyradioBinary, "speaker", "--name", hostileName, "--room", hostileRoom, "--json-events",
                "--no-audio", "--state-dir", lan.stateDir("speaker2-hostile"),
            ])
        defer { hostile.kill() }
        try dj.waitForEvent("both speakers") { event in
            event.name == "speakers" && (event["speakers"] as? [[String: Any]])?.count == 2
        }
        let browser = try Browser(lan, host: 3, url: url, width: 1280)
        defer { browser.quit() }
        // A guest's page has no speakers: the list is the DJ's.
        let guest = try browser.command(["cmd": "eval", "js": "return document.getElementById('spkc').hidden"])
        #expect(guest["value"] as? Bool == true, "\(guest)")
        _ = try browser.command(["cmd": "open", "url": djURL])
        let shown = try browser.command(["cmd": "wait_text", "text": "playing", "timeout": 30])
        #expect(shown["error"] == nil, "\(shown)")
        // The hostile speaker is listed as text, its room too, and nothing of it runs.
        for text in [hostileName, hostileRoom] {
            let listed = try browser.command(["cmd": "wait_text", "text": text, "timeout": 20])
            #expect(listed["error"] == nil, "\(text): \(listed)")
        }
        let check = try browser.command(["cmd": "injection_check"])
        #expect(check["clean"] as? Bool == true && check["pwned"] as? Bool == false, "\(check)")

        try browser.checkSpeakerCard(speaker)
        let state = try browser.command(["cmd": "state"])
        #expect((state["script_errors"] as? [Any])?.isEmpty == true, "\(state)")
        #expect((state["csp_errors"] as? [Any])?.isEmpty == true, "\(state)")
    }

    @Test("A private station's page asks for the join code, refuses a wrong one, and opens with the right one")
    func privateStationPage() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dj = try lan.startDJ(host: 1, name: "Secret", extra: ["--private"])
        let code = try #require(try dj.waitForEvent("join code") { $0.name == "join_code" }.string("code"))
        let url = try #require(try dj.waitForEvent("web_page") { $0.name == "web_page" }.string("url"))
        let browser = try Browser(lan, host: 2, url: url, width: 360)
        defer { browser.quit() }
        #expect(
            try browser.command(["cmd": "wait_text", "text": "Ask the DJ for the join code", "timeout": 30])["error"]
                == nil)
        // Nothing of the station shows before the code: its state is refused.
        let closed = try browser.command(["cmd": "state"])
        #expect(closed["station"] as? String != "Secret", "\(closed)")
        _ = try browser.command(["cmd": "fill", "label": "Join code", "text": "AAAA-BBBB-CCCCC", "submit": true])
        #expect(try browser.command(["cmd": "wait_text", "text": "does not open", "timeout": 30])["error"] == nil)
        _ = try browser.command(["cmd": "fill", "label": "Join code", "text": code.lowercased(), "submit": true])
        let open = try browser.command(["cmd": "wait_text", "text": "Secret", "timeout": 30])
        #expect(open["error"] == nil, "\(open)")
        _ = try browser.command(["cmd": "click", "name": "Vote up"])
        try dj.waitForEvent("the browser's vote") { $0.name == "vote_counted" && $0.int("up") == 1 }
    }
}

extension Event {
    /// The title of the playing track in a `state` event.
    static func title(_ event: Event) -> String? { (event["now_playing"] as? [String: Any])?["title"] as? String }
}

/// One browser on a testbed host, driven line by line through browser.py: headless Chromium by
/// default, or WebKit (WebKitGTK's MiniBrowser under Xvfb) or Firefox ESR (over WebDriver BiDi).
final class Browser {
    static let python = "/usr/bin/python3"
    static var isAvailable: Bool { Engine.chromium.isAvailable }

    /// The three engines guests carry (docs/WEB.md), each from Debian.
    enum Engine: String {
        case chromium, webkit, firefox

        var isAvailable: Bool {
            let files: [String]
            let modules: [String]
            switch self {
            case .chromium: (files, modules) = (["/usr/bin/chromedriver"], ["selenium"])
            case .webkit:
                files = [
                    "/usr/bin/WebKitWebDriver", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                    "/usr/bin/xvfb-run", "/usr/bin/dbus-run-session",
                ]
                modules = ["selenium"]
            case .firefox: (files, modules) = (["/usr/bin/firefox-esr"], ["websocket"])
            }
            return FileManager.default.isExecutableFile(atPath: Browser.python)
                && files.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
                && modules.allSatisfy { FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/\($0)") }
        }
    }

    private let process: TestbedProcess
    /// What browser.py said when the page had loaded (engine, user agent, width).
    let ready: [String: Any]

    /// Opens `url` in `engine` on `host`. `env` goes to the browser (PULSE_SERVER: where it plays).
    init(
        _ lan: Testbed, host: Int, url: String, width: Int, name: String? = nil, engine: Engine = .chromium,
        env: [String: String] = [:], extra: [String] = []
    ) throws {
        let script = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/web/browser.py").path
        let driver =
            [Self.python, script, "--engine", engine.rawValue, "--url", url, "--width", String(width)]
            + (name.map { ["--name", $0] } ?? []) + extra
        // WebKitGTK needs a display and a session bus; Chromium and Firefox run headless.
        let wrapper =
            engine == .webkit
            ? ["/usr/bin/xvfb-run", "-a", "-s", "-screen 0 1600x1200x24", "/usr/bin/dbus-run-session", "--"] : []
        process = try lan.spawn(host: host, wrapper + driver, env: env, stdin: true)
        let ready = try process.waitForLine(containing: "\"ready\"", timeout: .seconds(180))
        guard ready.contains("\"ready\": true") || ready.contains("\"ready\":true") else {
            throw TestbedError(
                "the browser on host \(host) did not start: \(ready) \(process.text(.stderr).suffix(2000))")
        }
        self.ready = parseJSON(ready) as? [String: Any] ?? [:]
    }

    /// Sends one command and waits for its one-line answer.
    func command(_ command: [String: Any], timeout: Duration = .seconds(120)) throws -> [String: Any] {
        let count = process.readLines().count
        let data = try JSONSerialization.data(withJSONObject: command)
        process.send(String(decoding: data, as: UTF8.self))
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let lines = process.readLines()
            if lines.count > count {
                return parseJSON(lines[count]) as? [String: Any] ?? ["error": "not JSON: \(lines[count])"]
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestbedError("the browser did not answer \(command): \(process.text(.stderr).suffix(2000))")
    }

    func quit() {
        process.send("{\"cmd\":\"quit\"}")
        if process.wait(timeout: .seconds(10)) == nil { process.kill(signal: SIGKILL) }
    }
}

extension Browser {
    /// On the DJ's page, open in this browser, with the speaker Kitchen in the room Downstairs
    /// listed: its volume slider moved from the keyboard, its room's mute button and its delay field
    /// reach the speaker, which says so, and the page shows what the speaker reports.
    func checkSpeakerCard(_ speaker: TestbedProcess) throws {
        var mark = speaker.events.count
        let slid = try command(["cmd": "slide", "label": "Volume of Kitchen", "value": 30])
        #expect(slid["value"] as? Int == 30, "\(slid)")
        let volume = try speaker.waitForEvent(after: mark, "volume 30 from the page") {
            $0.name == "speaker_settings" && $0.int("volume") == 30
        }
        #expect(volume.int("volume") == 30)
        mark = speaker.events.count
        _ = try command(["cmd": "click", "name": "Mute room Downstairs"])
        try speaker.waitForEvent(after: mark, "muted by its room") {
            $0.name == "speaker_settings" && ($0["muted"] as? Bool) == true
        }
        mark = speaker.events.count
        _ = try command(["cmd": "fill", "label": "Delay of Kitchen", "text": "120", "submit": true])
        try speaker.waitForEvent(after: mark, "delay 120") {
            $0.name == "speaker_settings" && $0.int("delay_ms") == 120
        }
        // The page shows what the speaker reports: muted, delay 120 ms.
        let reported = try command(["cmd": "wait_text", "text": "delay 120 ms", "timeout": 20])
        #expect(reported["error"] == nil, "\(reported)")
        let unmute = try command(["cmd": "click", "name": "Unmute Kitchen", "timeout": 20])
        #expect(unmute["error"] == nil, "the page did not show Kitchen muted: \(unmute)")
    }
}
