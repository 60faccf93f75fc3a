import CMpvLoader
import Foundation
import Synchronization

/// What one read of a ``PlayerByteSource`` brought.
public enum ByteSourceRead: Equatable, Sendable {
    /// This many bytes (at least one) were copied.
    case bytes(Int)
    /// The offset is at or past the end.
    case end
    /// The source was cancelled (mpv stops reading it).
    case cancelled
    /// The bytes will not come (a failed download, say).
    case failed(String)
}

/// Bytes the player reads through its own protocol (``Player/streamProtocol``): a cached track,
/// say, read while it is still being fetched. A read may wait for its bytes; ``cancel()`` (from
/// another thread) must make it return.
public protocol PlayerByteSource: AnyObject, Sendable {
    /// The size in bytes.
    var size: Int64 { get }
    /// Copies bytes from `offset` into `buffer`, waiting for the first if none is there yet.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> ByteSourceRead
    /// Makes a waiting read, and every later one, fail.
    func cancel()
}

extension MediaCache.Reader: PlayerByteSource {}

extension Player {
    /// The URL scheme of the sources the player opens with its `openStream` function
    /// (`partyradio-stream://NAME`).
    public static let streamProtocol = "partyradio-stream"

    /// The per-file options of a load from a stream of this protocol (a file still arriving), so
    /// that a start far into the file needs few of the bytes before it. mpv (0.35) reads a stream's
    /// first stream buffer and the rest of a block before it opens the file, lavf then reads ahead
    /// to analyse the stream (5 s of packets by default), and mpv reads forward through a gap up to
    /// its stream buffer rather than seek across it. With its default 128 KB buffer and analysis a
    /// start 8 s into a 44 KB/s WAV read every byte from 0 (458 KB) before it played; with a 32 KB
    /// buffer and 0.1 s of analysis it reads the first 131,116 bytes, seeks, and reads from the
    /// target (seen with a C program logging libmpv's stream callbacks, mpv 0.35.1). WAV packets stay
    /// 4 KB here (16 KB for a whole file, `Player`'s settings): mpv decodes nothing of a packet until
    /// all of it has arrived.
    public static let streamLoadOptions =
        "stream-buffer-size=32KiB,demuxer-lavf-analyzeduration=0.1,demuxer-lavf-o=[max_size=4096]"
    /// What a start far into the file needs from its start (the 131,116 bytes above, and a little more).
    public static let streamStartBytes: Int64 = 136 << 10
    /// The gap mpv reads through rather than seek (its stream buffer): a start less than this past
    /// ``streamStartBytes`` needs every byte up to it.
    public static let streamReadThroughBytes: Int64 = 32 << 10
    /// What of the file's end a start needs: lavf reads what follows the audio when it opens a file
    /// (a WAV's chunks after its data, such as the tags the demo library writes; an MP3's ID3v1
    /// tag), and mpv waits for it before it plays.
    public static let streamTailBytes: Int64 = 16 << 10

    /// Whether mpv is waiting for bytes of a stream of this protocol (a file still arriving): one
    /// of its reads has waited more than 50 ms. No mpv call: the stream callbacks keep it.
    public var isWaitingForBytes: Bool { streams?.isWaiting(longerThan: 50_000_000) ?? false }

    /// The URL that makes the player read `name` from its `openStream` function.
    public static func streamURL(named name: String) -> String { "\(streamProtocol)://\(name)" }
}

/// What mpv's open callback needs: the function that opens a name, and the last read failure (a
/// failed read ends the file as if it were complete, to mpv; the event thread turns that into an
/// error, so the node streams the track's URL instead).
final class PlayerStreams: Sendable {
    let open: @Sendable (String) -> (any PlayerByteSource)?
    private let failure = Mutex<String?>(nil)

    init(open: @escaping @Sendable (String) -> (any PlayerByteSource)?) { self.open = open }

    func failed(_ reason: String) { failure.withLock { $0 = $0 ?? reason } }

    /// Since when (monotonic ns) mpv's read of such a stream has been waiting for its bytes; 0: none waits.
    private let readSince = Atomic<UInt64>(0)

    func reading(_ started: Bool) {
        readSince.store(started ? max(1, DispatchTime.now().uptimeNanoseconds) : 0, ordering: .relaxed)
    }

    /// Whether a read has waited for its bytes longer than `thresholdNs`.
    func isWaiting(longerThan thresholdNs: UInt64) -> Bool {
        let since = readSince.load(ordering: .relaxed)
        return since != 0 && DispatchTime.now().uptimeNanoseconds &- since > thresholdNs
    }

    /// The read failure since the last call, if any.
    func takeFailure() -> String? {
        failure.withLock { failure in
            defer { failure = nil }
            return failure
        }
    }

    /// Registers the protocol on `handle` (once, after mpv_initialize); self must outlive the mpv core.
    func register(on handle: OpaquePointer) -> Int32 {
        prmpv_stream_cb_add_ro(handle, Player.streamProtocol, Unmanaged.passUnretained(self).toOpaque(), streamOpen)
    }
}

/// One open stream: its source and mpv's read position. Only mpv's demuxer thread reads and seeks
/// (one call at a time); ``PlayerByteSource/cancel()`` may come from another.
private final class OpenStream {
    let source: any PlayerByteSource
    let streams: PlayerStreams
    var position: Int64 = 0

    init(source: any PlayerByteSource, streams: PlayerStreams) {
        self.source = source
        self.streams = streams
    }
}

// mpv's stream callbacks (its threads): they only read the source; none calls into mpv or the node.

private func streamOpen(
    _ context: UnsafeMutableRawPointer?, _ uri: UnsafeMutablePointer<CChar>?,
    _ info: UnsafeMutablePointer<mpv_stream_cb_info>?
) -> Int32 {
    guard let context, let uri, let info else { return MPV_ERROR_LOADING_FAILED.rawValue }
    let streams = Unmanaged<PlayerStreams>.fromOpaque(context).takeUnretainedValue()
    let prefix = Player.streamProtocol + "://"
    let text = String(cString: uri)
    guard text.hasPrefix(prefix), let source = streams.open(String(text.dropFirst(prefix.count))) else {
        return MPV_ERROR_LOADING_FAILED.rawValue
    }
    _ = streams.takeFailure()  // a new file: an earlier one's failure is not this one's
    let stream = OpenStream(source: source, streams: streams)
    info.pointee.cookie = Unmanaged.passRetained(stream).toOpaque()  // released by streamClose
    info.pointee.read_fn = streamRead
    info.pointee.seek_fn = streamSeek
    info.pointee.size_fn = streamSize
    info.pointee.close_fn = streamClose
    info.pointee.cancel_fn = streamCancel
    return 0
}

private func streamRead(_ cookie: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ count: UInt64)
    -> Int64
{
    guard let cookie, let buffer else { return -1 }
    let stream = Unmanaged<OpenStream>.fromOpaque(cookie).takeUnretainedValue()
    let length = Int(min(count, UInt64(Int32.max)))
    stream.streams.reading(true)
    defer { stream.streams.reading(false) }
    switch stream.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length), at: stream.position) {
    case .bytes(let read):
        stream.position += Int64(read)
        return Int64(read)
    case .end:
        return 0
    case .cancelled:
        return -1  // mpv's own doing: a stop, another file
    case .failed(let reason):
        stream.streams.failed(reason)
        return -1
    }
}

private func streamSeek(_ cookie: UnsafeMutableRawPointer?, _ offset: Int64) -> Int64 {
    guard let cookie else { return Int64(MPV_ERROR_GENERIC.rawValue) }
    let stream = Unmanaged<OpenStream>.fromOpaque(cookie).takeUnretainedValue()
    guard offset >= 0, offset <= stream.source.size else { return Int64(MPV_ERROR_GENERIC.rawValue) }
    stream.position = offset
    return offset
}

private func streamSize(_ cookie: UnsafeMutableRawPointer?) -> Int64 {
    guard let cookie else { return Int64(MPV_ERROR_UNSUPPORTED.rawValue) }
    return Unmanaged<OpenStream>.fromOpaque(cookie).takeUnretainedValue().source.size
}

private func streamCancel(_ cookie: UnsafeMutableRawPointer?) {
    guard let cookie else { return }
    Unmanaged<OpenStream>.fromOpaque(cookie).takeUnretainedValue().source.cancel()
}

private func streamClose(_ cookie: UnsafeMutableRawPointer?) {
    guard let cookie else { return }
    let stream = Unmanaged<OpenStream>.fromOpaque(cookie).takeRetainedValue()
    stream.source.cancel()
}
