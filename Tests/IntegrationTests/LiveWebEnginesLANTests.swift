import Foundation
import PartyRadioCore
import Testing

/// A live station on a plain http page in Firefox ESR (over WebDriver BiDi) and WebKit (WebKitGTK's
/// MiniBrowser under Xvfb, the engine of every iPhone browser), each playing into a PulseAudio of
/// its own: with no WebCodecs on an insecure page, the page decodes Ogg Opus chunks with
/// decodeAudioData (docs/WEB.md, "Without WebCodecs"). The same checks as Chromium's in
/// LiveWebLANTests: the Ogg writer against one continuous decode, and each plan against the frame's
/// stamp caught on the group.
@Suite(
    "A live station on a plain http page in Firefox and WebKit", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct LiveWebEnginesLANTests {
    @Test(
        "Firefox: a live station over plain http, through Ogg Opus",
        .enabled(if: Browser.Engine.firefox.isAvailable, "needs Debian's firefox-esr and python3-websocket"))
    func firefox() throws { try plainPage(.firefox) }

    @Test(
        "WebKit: a live station over plain http, through Ogg Opus (its AudioDecoder taken away)",
        .enabled(if: Browser.Engine.webkit.isAvailable, "needs Debian's webkit2gtk-driver and xvfb"))
    func webkit() throws { try plainPage(.webkit) }

    func plainPage(_ engine: Browser.Engine) throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let (dj, dir, fifo) = try LiveLANTests.startLiveDJ(lan)
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let group = try #require(started.string("group")).split(separator: ":")
        let url = try lan.pageLinks(dj).url
        let (sound, env) = try lan.startSoundServer(host: 3)
        defer { sound.kill() }
        let browser = try Browser(lan, host: 3, url: url, width: 1280, engine: engine, env: env)
        defer { browser.quit() }
        #expect(browser.ready["engine"] as? String == engine.rawValue, "\(browser.ready)")

        let capturePath = "\(dir)/caught.txt"
        let capture = try LiveLANTests.captureGroup(lan, host: 2, group: group, seconds: 40, path: capturePath)
        let writer = try lan.spawn(
            host: 1,
            [
                "python3", "-u", Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/live_pcm_writer.py").path,
                fifo, "30", "500",
            ])
        try writer.waitForLine(containing: "open", timeout: .seconds(15))
        Thread.sleep(forTimeInterval: 1)
        try LiveWebLANTests.checkOggWriter(browser)
        if engine == .webkit {
            // WebKitGTK 2.50 has AudioDecoder even on an insecure page (and the page then prefers it);
            // Safari may not: the test takes it away to play the Ogg path, as such a browser would.
            #expect(try browser.evaluate("return typeof window.AudioDecoder") as? String == "function")
            _ = try browser.evaluate("window.AudioDecoder = undefined; return true")
        }
        _ = try browser.command(["cmd": "click", "name": "Listen"])
        Thread.sleep(forTimeInterval: 9)
        let figures = try LiveWebLANTests.liveFigures(browser)
        let sync = try browser.command(["cmd": "state"])
        _ = try browser.command(["cmd": "click", "name": "Stop listening"])
        print("live web (\(engine.rawValue), ogg): \(sync["sync"] ?? "")")
        #expect(figures["decoder"] as? String == "ogg", "a plain http page decodes Ogg Opus: \(figures)")
        #expect((figures["chunkFails"] as? Int ?? -1) == 0, "\(figures)")
        let said = LiveWebLANTests.extraBeforeLate(figures)
        #expect(said >= 20, "the chunks' cost is said with the first frame: \(said)")
        #expect((sync["script_errors"] as? [Any])?.isEmpty != false, "script errors: \(sync)")

        // What the page played was caught: the writer and the capture need not play on.
        writer.kill()
        try LiveLANTests.stopCapture(capture)
        let stamps = try LiveLANTests.stamps(caught: capturePath)
        LiveWebLANTests.checkListening(figures, stamps: stamps, label: "\(engine.rawValue), ogg")
        dj.kill(signal: SIGINT)
        _ = dj.wait(timeout: .seconds(10))
    }
}
