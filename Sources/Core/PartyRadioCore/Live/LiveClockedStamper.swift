/// Numbers and times the frames of a source that runs on a clock of its own: a sound server's capture
/// stream (docs/LIVE.md, "Sources"), which cannot be paced as a pipe's writer is. Pure: the capture
/// thread hands it the instant each frame was read and the stream's latency then (how long ago the
/// next sample to be read was captured), both on the station clock.
///
/// The rule, ``LiveStamper``'s where it applies:
/// - A frame's last sample was captured at `read − latency`, so its first sample at `read − latency −
///   f`. The first frame of a stream is stamped so; after it each frame follows the last exactly
///   (`previous + f`), so that the stamps advance by the frame length whatever the jitter of the reads
///   and of the server's latency reports.
/// - Captured later than that by more than ``LiveStamper/slipNs`` (the server dropped audio, or the
///   source's clock runs slower than the station's): whole frame numbers and times are skipped to catch
///   up; the listeners conceal them. A capture that was late itself reads a larger latency and skips
///   nothing.
/// - Later by ``LiveStamper/gapNs`` or more (the source paused, the sink sent nothing): a new stream,
///   numbered by the real-time clock.
/// - Captured earlier than its stamp by more than the slip (the source's clock runs faster), or a stamp
///   whose last sample would come after the read: the frame is dropped (nil), so that no frame is ever
///   stamped in the future and the stamps stay on the source's time. A source 100 ppm fast loses one
///   10 ms frame every 200 s or so.
public struct LiveClockedStamper: Sendable {
    private var stamper: LiveStamper
    /// Frames dropped because the source ran ahead of its stamps.
    public private(set) var dropped = 0

    public init(duration: LiveFrameDuration) {
        stamper = LiveStamper(duration: duration)
    }

    public var duration: LiveFrameDuration { stamper.duration }

    /// The number and time of the frame just read at `read`, when the next sample to read was captured
    /// `latencyNs` ago (negative: not yet played, as a monitor may report); nil when the frame must be
    /// dropped. `realTimeNs` numbers a new stream.
    public mutating func stamp(readAt read: DJTime, latencyNs: Int64, realTimeNs: Int64) -> (
        sequence: UInt64, firstSample: DJTime
    )? {
        // The next frame's last sample is due at `notBefore` (its first at due, LiveStamper's rule).
        let captured = read.ns - max(0, latencyNs)
        if let notBefore = stamper.nextReadNotBefore?.ns {
            if read.ns < notBefore || captured < notBefore - stamper.slipNs {
                dropped += 1
                return nil
            }
        }
        return stamper.stamp(readAt: read, backlogNs: max(0, latencyNs), realTimeNs: realTimeNs)
    }

    /// The source went away: the next frame starts a new stream.
    public mutating func interrupt() { stamper.interrupt() }
}
