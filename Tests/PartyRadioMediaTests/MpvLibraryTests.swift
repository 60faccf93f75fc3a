import CMpvLoader
import Glibc
import Testing

@testable import PartyRadioMedia

/// libmpv is loaded with dlopen at the first player, not linked (docs/MEDIA.md).
@Suite("libmpv loader")
struct MpvLibraryTests {
    @Test("Loads the installed libmpv, once, and again at once")
    func loads() throws {
        try MpvLibrary.load()
        #expect(MpvLibrary.isLoaded)
        try MpvLibrary.load()
        #expect(MpvLibrary.soname == "libmpv.so.2")
    }

    @Test("A library that is not there is one clear sentence with the fix, and the loaded one stays")
    func missingLibrary() throws {
        let error = #expect(throws: PlayerError.self) {
            try MpvLibrary.load(soname: "libmpv-partyradio-missing.so.9")
        }
        #expect(error?.libraryMissing == true)
        let description = error?.description ?? ""
        #expect(description.hasPrefix("libmpv is not installed: sudo apt install libmpv2 ("))
        #expect(description.contains("libmpv-partyradio-missing.so.9"))
        #expect(!description.contains("\n"))
        // A failed attempt does not unload or replace the real one.
        try MpvLibrary.load()
        #expect(MpvLibrary.isLoaded)
    }

    @Test("A library without mpv's functions is refused, naming the first one missing")
    func notMpv() throws {
        let error = #expect(throws: PlayerError.self) { try MpvLibrary.load(soname: "libz.so.1") }
        #expect(error?.libraryMissing == true)
        #expect(error?.description.contains("missing mpv_client_api_version") == true)
    }

    @Test("The player works through the loaded table: create, a property, shut down")
    func playerThroughLoader() throws {
        let player = try Player(options: Player.Options(audio: .none))
        defer { player.shutdown() }
        #expect(MpvLibrary.isLoaded)
        #expect(player.isIdle)
        #expect(player.stringProperty("mpv-version")?.hasPrefix("mpv ") == true)
    }

    @Test("PulseAudio's request size: a share of the buffer when mpv left it to the server, else untouched")
    func pulseRequest() {
        let unset = UInt32.max
        // mpv's pulse output at 48 kHz, stereo float, pulse-buffer=200: tlength 76,800 bytes.
        let mpv = prmpv_pa_buffer_attr(maxlength: unset, tlength: 76_800, prebuf: 0, minreq: unset, fragsize: unset)
        let half = prmpv_pulse_request_attr(mpv, 500)
        #expect(half.minreq == 38_400)
        #expect(half.tlength == 76_800 && half.maxlength == unset && half.prebuf == 0 && half.fragsize == unset)
        // At most half the buffer, whatever is asked; rounded down to whole samples of any format.
        #expect(prmpv_pulse_request_attr(mpv, 900).minreq == 38_400)
        #expect(prmpv_pulse_request_attr(mpv, 333).minreq == 25_568)
        #expect(prmpv_pulse_request_attr(mpv, 333).minreq % 8 == 0)
        // 0: the server's default; a caller's own minreq, or no tlength, is left as it is.
        #expect(prmpv_pulse_request_attr(mpv, 0).minreq == unset)
        var own = mpv
        own.minreq = 1_920
        #expect(prmpv_pulse_request_attr(own, 500).minreq == 1_920)
        var noLength = mpv
        noLength.tlength = unset
        #expect(prmpv_pulse_request_attr(noLength, 500).minreq == unset)
        noLength.tlength = 0
        #expect(prmpv_pulse_request_attr(noLength, 500).minreq == unset)
        // So small a share of so small a buffer that nothing is left: the server's default.
        let tiny = prmpv_pa_buffer_attr(maxlength: unset, tlength: 12, prebuf: 0, minreq: unset, fragsize: unset)
        #expect(prmpv_pulse_request_attr(tiny, 100).minreq == unset)
    }

    @Test("The buffer mpv reads back is four requests long, at most mpv's queue, never shorter than granted")
    func pulseReportedBuffer() {
        let unset = UInt32.max
        // Granted: 100 ms of 48 kHz stereo float (38,400 bytes), a request every 50 ms; mpv's queue,
        // 200 ms, is 76,800 bytes.
        let granted = prmpv_pa_buffer_attr(
            maxlength: 4_194_304, tlength: 38_400, prebuf: 0, minreq: 19_200, fragsize: unset)
        let queue: UInt32 = 76_800
        let reported = prmpv_pulse_reported_attr(granted, queue)
        #expect(reported.tlength == 76_800)
        #expect(reported.minreq == 19_200 && reported.maxlength == 4_194_304 && reported.prebuf == 0)
        // A request every 100 ms of a 200 ms buffer: four would be 400 ms, longer than the queue.
        var longer = granted
        longer.tlength = 76_800
        longer.minreq = 38_400
        #expect(prmpv_pulse_reported_attr(longer, queue).tlength == 76_800)
        // A buffer longer than the queue stays as granted.
        longer.tlength = 153_600
        #expect(prmpv_pulse_reported_attr(longer, queue).tlength == 153_600)
        // The server's own 20 ms request of the 100 ms buffer: four of them are shorter, so as granted.
        var serverDefault = granted
        serverDefault.minreq = 7_680
        #expect(prmpv_pulse_reported_attr(serverDefault, queue).tlength == 38_400)
        // Nothing known to scale by: unchanged.
        var noRequest = granted
        noRequest.minreq = unset
        #expect(prmpv_pulse_reported_attr(noRequest, queue).tlength == 38_400)
        noRequest.minreq = 0
        #expect(prmpv_pulse_reported_attr(noRequest, queue).tlength == 38_400)
    }

    @Test("PulseAudio's timing report, read back later: moved on by the time since the server took it, while it plays")
    func pulseTimingAt() {
        var info = prmpv_pa_timing_info()
        info.timestamp = timeval(tv_sec: 1_000, tv_usec: 250_000)
        info.transport_usec = 40
        info.playing = 1
        #expect(prmpv_pulse_timing_at(info, 1_000_250_000 + 73_000).transport_usec == 73_000)
        // A timestamp ahead of now (another clock's rounding): nothing has played since.
        #expect(prmpv_pulse_timing_at(info, 1_000_200_000).transport_usec == 0)
        // Corked or underrun: nothing plays, the report stands as it was.
        info.playing = 0
        #expect(prmpv_pulse_timing_at(info, 1_000_250_000 + 73_000).transport_usec == 40)
    }

    @Test("An answered timing update is reused only while young, answered and with sound indexes")
    func pulseTimingReusable() {
        #expect(prmpv_pulse_timing_reusable(20_000, 100_000, 1, 0) == 1)
        #expect(prmpv_pulse_timing_reusable(100_000, 100_000, 1, 0) == 0)
        #expect(prmpv_pulse_timing_reusable(20_000, 0, 1, 0) == 0)  // off: a round trip every time
        #expect(prmpv_pulse_timing_reusable(20_000, 100_000, 0, 0) == 0)  // still on its way, or failed
        #expect(prmpv_pulse_timing_reusable(20_000, 100_000, 1, 1) == 0)  // after a cork or a flush
    }

    @Test("The executable's pa_stream_connect_playback is the one libmpv's calls find first")
    func pulseInterposed() throws {
        try MpvLibrary.load()
        // Found through the global scope (as libmpv's calls are bound): the definition in this
        // process's executable, not libpulse's, which libmpv loaded.
        let pulse = dlopen("libpulse.so.0", RTLD_LAZY | RTLD_NOLOAD)
        #expect(pulse != nil)
        for name in [
            "pa_stream_connect_playback", "pa_stream_get_buffer_attr", "pa_stream_update_timing_info",
            "pa_stream_get_timing_info",
        ] {
            let first = dlsym(nil, name)  // RTLD_DEFAULT
            #expect(first != nil, "\(name)")
            if let pulse { #expect(dlsym(pulse, name) != first, "\(name)") }
        }
        if let pulse { dlclose(pulse) }
    }
}
