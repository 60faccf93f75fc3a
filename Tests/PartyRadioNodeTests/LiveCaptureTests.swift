import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioNode

/// The DJ's live capture on a source that is a regular file (`--live pipe:FILE`, or `--live -`
/// with stdin redirected from a file): the rest of a file is no audio a writer already put in a
/// pipe, so it never moves a frame's stamp back (docs/LIVE.md, "Time").
@Suite struct LiveCaptureTests {
    @Test func aRegularFileIsStampedFromItsReadsNotFromWhatIsLeftOfIt() throws {
        let path = NSTemporaryDirectory() + "partyradio-live-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pcm"
        // Five seconds of silence in the station's format, 48000:16:2.
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 5 * 48_000 * 4)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inbox = Inbox<NodeInput>()
        let clock = NodeClock()
        let started = clock.now()
        let capture = try LiveCapture(
            source: .pipe(path: path, format: .station), settings: LiveSender.Settings(), clock: clock, inbox: inbox)
        defer { capture.stop(waiting: true) }
        var frames: [LiveFrame] = []
        // Generous: a loaded machine may start the thread late; the check does not depend on it.
        let deadline = started.ns + 60_000_000_000
        while frames.count < 3 && clock.now().ns < deadline {
            for case .live(.frame(let frame)) in inbox.drain() { frames.append(frame) }
            usleep(10_000)
        }
        let first = try #require(frames.first)
        // The rule: a frame's first sample is at most one frame before its last sample was read,
        // and nothing was read before the capture started. One second of slack for the rounding;
        // stamping from the file's remaining length puts it nearly five seconds back.
        #expect(
            first.firstSample.ns >= started.ns - 1_000_000_000,
            "first frame stamped \(Double(started.ns - first.firstSample.ns) / 1e6) ms before the capture started")
    }
}
