import Foundation
import Glibc
import PartyRadioCore
import PartyRadioLive
import Synchronization

/// The DJ's live capture (docs/LIVE.md, "The DJ's capture"): reads raw PCM from a named pipe or
/// standard input on a thread of its own, so that the node's loop never waits on the source; cuts
/// it into frames, stamps each with ``LiveStamper`` (the station clock is this node's clock),
/// encodes it with Opus and pushes it into the node's inbox as ``LiveInput/frame(_:)``. The DJ
/// machine sends it (signed, sealed on a private station) through the outbox like every datagram.
///
/// A pipe whose writer goes away makes the station silent (``LiveInput/silent(_:)``) and is opened
/// again, so that the next writer is heard; so is a source that stops writing for
/// ``silenceNs``. Standard input and regular files are read once to their end.
///
/// The sound server's sources (`pulse`, `pulse:NAME`) are recorded through ``LivePulseSource`` and
/// stamped by ``LiveClockedStamper`` with the stream's latency: they run on the source's clock and
/// cannot be paced.
final class LiveCapture: Sendable {
    /// A source that delivers nothing for this long is silent (the DJ says so once).
    static let silenceNs: Int64 = 500_000_000
    /// How often the thread looks whether it should stop, while it waits.
    private static let pollMs: Int32 = 100

    private let stopping = StopFlag()
    private let ended = Condition(false)

    /// Checks the source can be opened and the encoder made (a clear error before going on air),
    /// then starts reading.
    /// - Parameters:
    ///   - pulse: the sound server's source, opened (a `pulse` source without it ends at once).
    ///   - reopen: opens it again once the sound server is back, after it went away (restarted,
    ///     crashed); nil: the station stays silent then.
    init(
        source: LiveSource, pulse: LivePulseSource? = nil,
        reopen: (@Sendable () throws(NodeError) -> LivePulseSource)? = nil, settings: LiveSender.Settings,
        clock: NodeClock, inbox: Inbox<NodeInput>
    ) throws(NodeError) {
        do { _ = try OpusEncoder(bitrate: settings.bitrate, duration: settings.duration) } catch {
            throw NodeError(.usage, "Cannot make the live encoder: \(error.description)", cause: error)
        }
        if case .pipe(let path, _) = source {
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw NodeError(
                    .storage,
                    "The live pipe \(path) does not exist (\(String(cString: strerror(errno)))): make it with "
                        + "'mkfifo \(path)' and point the player's pipe output at it.")
            }
            guard access(path, R_OK) == 0 else {
                throw NodeError(.storage, "Cannot read the live pipe \(path): \(String(cString: strerror(errno))).")
            }
        }
        let thread = Thread { [stopping, ended] in
            // Its name in top -H and /proc/PID/task (15 bytes at most, Linux's limit), written by the
            // thread itself as PreciseTimer's nameCurrentThread does: `Thread.name` set before
            // `start()` never reached the kernel (and the name was 18 bytes), set from the thread
            // only sometimes.
            let comm = open("/proc/thread-self/comm", O_WRONLY)
            if comm >= 0 {
                _ = Array("dj-live-capture".utf8).withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
                close(comm)
            }
            Self.run(
                source: source, pulse: pulse, reopen: reopen, settings: settings, clock: clock, inbox: inbox,
                stopping: stopping)
            pulse?.close()
            ended.change { $0 = true }
        }
        thread.start()
    }

    /// Ends the thread within ``pollMs``; `waiting`: waits for it.
    func stop(waiting: Bool) {
        stopping.set()
        if waiting { _ = ended.wait { $0 ? true : nil } }
    }

    /// How often a sound server that went away is asked for again.
    static let reconnectNs: Int64 = 1_000_000_000

    private static func run(
        source: LiveSource, pulse: LivePulseSource?, reopen: (@Sendable () throws(NodeError) -> LivePulseSource)?,
        settings: LiveSender.Settings, clock: NodeClock, inbox: Inbox<NodeInput>, stopping: StopFlag
    ) {
        let encoder: OpusEncoder
        do { encoder = try OpusEncoder(bitrate: settings.bitrate, duration: settings.duration) } catch {
            return inbox.push(.live(.failed(NodeError(.usage, "Cannot make the live encoder: \(error.description)"))))
        }
        var reader = FrameReader(
            frameBytes: encoder.samplesPerFrame * source.format.bytesPerFrame, settings: settings, encoder: encoder,
            clock: clock, inbox: inbox)
        switch source {
        case .stationSink, .pulseSource:
            guard var current = pulse else { return }
            while !stopping.isSet {
                reader.record(current, stopping: stopping)
                guard !stopping.isSet else { break }
                reader.silent("the sound server's stream of \(current.recorded) ended.")
                current.close()
                guard let reopen else { break }
                // The sound server went away (restarted, crashed): asked for again every second, and the
                // station's sink made again in it; the first frame after puts the station back on air.
                var next: LivePulseSource?
                while next == nil && !stopping.isSet {
                    var waited: Int64 = 0
                    while waited < reconnectNs && !stopping.isSet {
                        usleep(UInt32(pollMs) * 1000)
                        waited += Int64(pollMs) * 1_000_000
                    }
                    if !stopping.isSet { next = try? reopen() }
                }
                guard let next else { break }
                current = next
            }
            current.close()
        case .standardInput:
            reader.read(descriptor: 0, stopping: stopping)
            reader.silent("standard input ended.")
        case .pipe(let path, _):
            var isFIFO = true
            while !stopping.isSet {
                let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else {
                    reader.silent("cannot open the live pipe \(path) (\(String(cString: strerror(errno)))).")
                    usleep(500_000)
                    continue
                }
                var status = stat()
                if fstat(fd, &status) == 0 { isFIFO = (status.st_mode & S_IFMT) == S_IFIFO }
                reader.read(descriptor: fd, stopping: stopping)
                close(fd)
                reader.silent(isFIFO ? "the live pipe's writer closed \(path)." : "the live file \(path) ended.")
                guard isFIFO else { break }
            }
        }
        while !stopping.isSet { usleep(UInt32(pollMs) * 1000) }
    }

    /// Reads one opening of the source to its end, a frame at a time.
    private struct FrameReader {
        let frameBytes: Int
        /// Bytes of one sample of every channel.
        let bytesPerSample: Int
        let settings: LiveSender.Settings
        let encoder: OpusEncoder
        let clock: NodeClock
        let inbox: Inbox<NodeInput>
        var stamper: LiveStamper
        /// The sound server's frames: stamped by the stream's latency, never paced.
        var clocked: LiveClockedStamper
        var buffer: [UInt8]
        var filled = 0
        /// Whether frames went out since the station last said it was silent.
        var sounding = false
        var lastFrameAt = LocalTime(ns: 0)

        init(
            frameBytes: Int, settings: LiveSender.Settings, encoder: OpusEncoder, clock: NodeClock,
            inbox: Inbox<NodeInput>
        ) {
            self.frameBytes = frameBytes
            bytesPerSample = LiveSampleFormat.station.bytesPerFrame
            self.settings = settings
            self.encoder = encoder
            self.clock = clock
            self.inbox = inbox
            stamper = LiveStamper(duration: settings.duration)
            clocked = LiveClockedStamper(duration: settings.duration)
            buffer = [UInt8](repeating: 0, count: frameBytes)
        }

        /// Tells the machine the source is silent, once per silence; the next frame starts a new stream.
        mutating func silent(_ why: String) {
            filled = 0
            stamper.interrupt()
            clocked.interrupt()
            guard sounding else { return }
            sounding = false
            inbox.push(.live(.silent(why)))
        }

        /// Until the end of the source (or a read error, or the node stops).
        mutating func read(descriptor fd: Int32, stopping: StopFlag) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // FIONREAD on a regular file is what is left of the file (Linux), not audio a writer
            // already put in a pipe: that would stamp the first frame the file's length back.
            var status = stat()
            let measuresBacklog = fstat(fd, &status) != 0 || (status.st_mode & S_IFMT) != S_IFREG
            while !stopping.isSet {
                poller.revents = 0
                let ready = poll(&poller, 1, LiveCapture.pollMs)
                if ready < 0 && errno != EINTR { return }
                if ready <= 0 {
                    if sounding && clock.now() - lastFrameAt >= LiveCapture.silenceNs {
                        silent("the live source sent nothing for \(LiveCapture.silenceNs / 1_000_000) ms.")
                    }
                    continue
                }
                let count = buffer.withUnsafeMutableBytes { raw in
                    Glibc.read(fd, raw.baseAddress! + filled, frameBytes - filled)
                }
                if count == 0 { return }  // the writer went away
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    return
                }
                filled += count
                if filled == frameBytes {
                    filled = 0
                    // What the writer put in the pipe after this frame: a capture that was late finds it full.
                    var waiting: Int32 = 0
                    let backlog = measuresBacklog && ioctl(fd, UInt(FIONREAD), &waiting) == 0 ? Int(waiting) : 0
                    frame(backlogNs: Int64(backlog / bytesPerSample) * 1_000_000_000 / 48_000, stopping: stopping)
                }
            }
        }

        /// The sound server's stream until it fails or the node stops: whole frames, each stamped with
        /// the latency the stream reports just after it was read. A sink with nothing playing may send
        /// nothing (the station is then silent, as a pipe without a writer).
        mutating func record(_ pulse: LivePulseSource, stopping: StopFlag) {
            while !stopping.isSet {
                let count: Int
                do { count = try pulse.session.read(into: &buffer, from: filled, timeoutMs: LiveCapture.pollMs) } catch
                {
                    return
                }
                let now = clock.now()
                if count == 0 {
                    if sounding && now - lastFrameAt >= LiveCapture.silenceNs {
                        silent("the live source sent nothing for \(LiveCapture.silenceNs / 1_000_000) ms.")
                    }
                    continue
                }
                filled += count
                guard filled == frameBytes else { continue }
                filled = 0
                // Until the server's first timing report there is no telling when the frame was captured.
                guard let latency = pulse.session.recordLatencyNs(),
                    let stamp = clocked.stamp(
                        readAt: DJTime(onTheDJ: now), latencyNs: latency, realTimeNs: NodeClock.realTimeNs())
                else { continue }
                send(sequence: stamp.sequence, firstSample: stamp.firstSample, at: now)
            }
        }

        /// The buffer's frame, paced to real time, stamped, encoded and handed to the node.
        private mutating func frame(backlogNs: Int64, stopping: StopFlag) {
            var now = clock.now()
            // A source faster than real time (a file poured into the pipe) waits for the frame's time.
            if let notBefore = stamper.nextReadNotBefore {
                while now.ns < notBefore.ns && !stopping.isSet {
                    usleep(UInt32(min(notBefore.ns - now.ns, 100_000_000) / 1000))
                    now = clock.now()
                }
            }
            let stamp = stamper.stamp(
                readAt: DJTime(onTheDJ: now), backlogNs: backlogNs, realTimeNs: NodeClock.realTimeNs())
            send(sequence: stamp.sequence, firstSample: stamp.firstSample, at: now)
        }

        /// The buffer's frame, encoded and handed to the node.
        private mutating func send(sequence: UInt64, firstSample: DJTime, at now: LocalTime) {
            let pcm = buffer.withUnsafeBytes { raw in
                Array(raw.bindMemory(to: Int16.self)).map { Int16(littleEndian: $0) }
            }
            guard let packet = try? encoder.encode(pcm) else { return }
            sounding = true
            lastFrameAt = now
            inbox.push(
                .live(
                    .frame(
                        LiveFrame(
                            sequence: sequence, firstSample: firstSample, duration: settings.duration,
                            payload: packet))))
        }
    }
}

/// A flag another thread raises once: the capture thread looks at it between waits.
private final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isSet: Bool { raised.load(ordering: .relaxed) }
    func set() { raised.store(true, ordering: .relaxed) }
}
