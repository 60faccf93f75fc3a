/// The bookkeeping of one parallel, ranged download (docs/MEDIA.md, "Fetching ahead"): which byte
/// ranges to ask for next, how far each chunk got, what to retry and from where. Pure: the media
/// adapter's worker threads call it under one lock and do the transfers.
///
/// The file is cut into chunks of ``Configuration/chunkBytes``. Before its size is known, the first
/// ``Configuration/speculativeChunks`` chunks are handed out at once (each answer's `Content-Range`
/// tells the size, so no round trip is spent on asking for it first; a chunk past the end is
/// answered 416 and dropped). A failed or stalled transfer is asked again from where its chunk
/// stopped. When nothing is left to hand out, an idle worker asks again for the rest of the chunk
/// with the most left to go (at most two transfers per chunk; three while a reader is stalled on it,
/// ``readerStalled()``): on a lossy link one connection waiting out a retransmission timeout no
/// longer holds up the whole file.
///
/// Chunks go out in file order, so the start arrives first and a player can read the file while it
/// downloads (``contiguousBytes(from:)``). A reader says where it reads (``need(offset:)``): the
/// chunk it waits for is then handed out before the others and hedged before the one with most
/// left, and ``nextForReader()`` gives a connection kept for the reader its first missing byte: a
/// chunk whose transfer is far from there is split at that byte, so the reader does not wait for
/// the bytes before it (a player that starts mid-track, or seeks ahead). A chunk a reader waits on
/// gets its second connection from a little ahead of the first, when much of it is left.
public struct RangeFetchPlan: Sendable {
    public struct Configuration: Sendable {
        public var chunkBytes: Int64
        public var speculativeChunks: Int
        /// Failed transfers of one chunk before the download gives up.
        public var maxFailuresPerChunk: Int
        /// A chunk is asked a second time only when at least this much of it is left.
        public var minimumHedgeBytes: Int64
        /// A chunk is split at a reader's first missing byte when its transfer is at least this far
        /// before it (about half a second of a preview at 25 % loss).
        public var minimumSplitBytes: Int64

        public init(
            chunkBytes: Int64 = 256 << 10, speculativeChunks: Int = 6, maxFailuresPerChunk: Int = 40,
            minimumHedgeBytes: Int64 = 8 << 10, minimumSplitBytes: Int64 = 32 << 10
        ) {
            self.chunkBytes = max(1, chunkBytes)
            self.speculativeChunks = max(1, speculativeChunks)
            self.maxFailuresPerChunk = max(1, maxFailuresPerChunk)
            self.minimumHedgeBytes = max(1, minimumHedgeBytes)
            self.minimumSplitBytes = max(1, minimumSplitBytes)
        }
    }

    /// One transfer: bytes `start...end` (inclusive, as in a Range header) of chunk `chunk`.
    public struct Request: Hashable, Sendable {
        public var chunk: Int
        public var start: Int64
        public var end: Int64

        public init(chunk: Int, start: Int64, end: Int64) {
            self.chunk = chunk
            self.start = start
            self.end = end
        }

        public var length: Int64 { end - start + 1 }
        /// The Range header's value.
        public var rangeHeader: String { "bytes=\(start)-\(end)" }
    }

    struct Chunk: Sendable {
        var start: Int64
        /// Exclusive.
        var end: Int64
        /// Bytes from `start` written so far, without a gap.
        var covered: Int64
        var inFlight = 0
        var failures = 0
        var isDone: Bool { covered >= end }
    }

    public let configuration: Configuration
    public private(set) var totalBytes: Int64?
    /// Why the download cannot finish (too many failures, the size changed, no range support).
    public private(set) var failure: String?
    /// Indexed by ``Request/chunk`` (a split appends, so indices stay put); they adjoin and cover
    /// the file, in the order of ``order``.
    private(set) var chunks: [Chunk] = []
    /// The chunks' indices in file order.
    private var order: [Int] = []
    /// Where a reader of the file reads next (nil: no one reads it yet).
    public private(set) var neededOffset: Int64?
    /// The chunk whose transfer a reader has waited on without a byte for a while
    /// (``readerStalled()``): it gets another transfer of the same bytes before anything else.
    private var stalledChunk: Int?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Every byte is written.
    public var isComplete: Bool { totalBytes != nil && chunks.allSatisfy(\.isDone) }

    /// Bytes written without a gap, summed over the chunks.
    public var coveredBytes: Int64 { chunks.reduce(0) { $0 + ($1.covered - $1.start) } }

    /// The next transfer to start, or nil when there is none now (all handed out, complete or failed).
    public mutating func next() -> Request? {
        guard failure == nil, !isComplete else { return nil }
        guard totalBytes != nil else {
            // Size unknown: the first chunks at fixed offsets, once each.
            guard chunks.count < configuration.speculativeChunks else { return nil }
            let start = Int64(chunks.count) * configuration.chunkBytes
            chunks.append(Chunk(start: start, end: start + configuration.chunkBytes, covered: start, inFlight: 1))
            order.append(chunks.count - 1)
            return request(chunks.count - 1)
        }
        if let hedge = takeStalled() { return hedge }
        let waiting = neededChunk
        // In file order, from the chunk a reader waits for (the start when no one reads yet).
        let idle = order.filter { !chunks[$0].isDone && chunks[$0].inFlight == 0 }
        let from = waiting.map { chunks[$0].start } ?? 0
        if let index = idle.first(where: { chunks[$0].start >= from }) ?? idle.first {
            chunks[index].inFlight += 1
            return request(index)
        }
        // Everything is in flight: help the chunk a reader waits for, else the one with the most left to go.
        let candidates = chunks.indices.filter {
            !chunks[$0].isDone && chunks[$0].inFlight == 1
                && chunks[$0].end - chunks[$0].covered >= configuration.minimumHedgeBytes
        }
        if let waiting, candidates.contains(waiting) { return help(waiting) }
        let mostLeft = candidates.max { chunks[$0].end - chunks[$0].covered < chunks[$1].end - chunks[$1].covered }
        guard let index = mostLeft else { return nil }
        chunks[index].inFlight += 1
        return request(index)
    }

    /// A second connection for chunk `index`, whose one transfer a reader waits on: the part of it
    /// from 64 KB ahead (two ``Configuration/minimumSplitBytes``) when there is much more left, so
    /// that the two bring what the reader reads next in parallel; otherwise the same rest again
    /// (a hedge: on a lossy link one of them is often stuck in a retransmission back-off).
    private mutating func help(_ index: Int) -> Request {
        let ahead = 2 * configuration.minimumSplitBytes
        var target = index
        if chunks[index].end - chunks[index].covered >= 2 * ahead {
            target = split(index, at: chunks[index].covered + ahead)
        }
        chunks[target].inFlight += 1
        return request(target)
    }

    /// How many bytes from `offset` on are written without a gap (across chunks): what a reader
    /// at `offset` may read now. 0 when the byte at `offset` is not there yet, or is past the end.
    public func contiguousBytes(from offset: Int64) -> Int64 {
        guard offset >= 0, let first = position(of: offset) else { return 0 }
        var position = offset
        for index in order[first...] {
            let chunk = chunks[index]
            guard chunk.start <= position, chunk.covered > position else { break }
            position = chunk.covered
            guard chunk.isDone else { break }
        }
        return position - offset
    }

    /// A reader reads at `offset` next: the chunk that holds its first missing byte goes first.
    public mutating func need(offset: Int64) {
        neededOffset = max(0, offset)
    }

    /// The next transfer for a connection kept for the reader (nil: it has nothing to do now):
    /// from the reader's first missing byte, in a chunk of its own when the transfer of the chunk
    /// that holds it is far before it; else the rest of that chunk, a second time if need be.
    public mutating func nextForReader() -> Request? {
        guard failure == nil, !isComplete, totalBytes != nil, let neededOffset, var index = neededChunk else {
            return nil
        }
        if let hedge = takeStalled() { return hedge }
        let missing = neededOffset + contiguousBytes(from: neededOffset)
        if missing - chunks[index].covered >= configuration.minimumSplitBytes {
            index = split(index, at: missing)
        }
        let chunk = chunks[index]
        if chunk.inFlight == 0 {
            chunks[index].inFlight += 1
            return request(index)
        }
        guard chunk.inFlight == 1, chunk.end - chunk.covered >= configuration.minimumHedgeBytes else { return nil }
        return help(index)
    }

    /// The reader has waited for its next byte for a while and none came: the transfer that brings it
    /// is most likely in a retransmission back-off (on a lossy link a lost retransmission doubles
    /// it: 200, 400, 800 ms…). The next connection free, the reader's own or a worker's, asks for the
    /// same bytes again, at most ``maxTransfersWhenStalled`` at once: the first to bring them wins
    /// (``isWanted(_:)`` stops the others). Only the next 64 KB (two ``Configuration/minimumSplitBytes``)
    /// are raced; the rest of the chunk is split off and handed out as usual.
    public mutating func readerStalled() {
        guard let index = neededChunk, chunks[index].inFlight < Self.maxTransfersWhenStalled else { return }
        stalledChunk = index
    }

    /// Transfers of one chunk at once when a reader is stalled on it (one more than a hedge).
    public static let maxTransfersWhenStalled = 3

    /// The transfer ``readerStalled()`` asked for, if it is still of use (once).
    private mutating func takeStalled() -> Request? {
        guard let stalled = stalledChunk else { return nil }
        stalledChunk = nil
        guard var index = neededChunk, index == stalled, let neededOffset,
            chunks[index].inFlight < Self.maxTransfersWhenStalled
        else { return nil }
        let missing = neededOffset + contiguousBytes(from: neededOffset)
        if missing - chunks[index].covered >= configuration.minimumSplitBytes { index = split(index, at: missing) }
        let ahead = 2 * configuration.minimumSplitBytes
        // The split-off rest has no transfer yet; the raced part keeps the stalled ones.
        if chunks[index].end - chunks[index].covered > 2 * ahead { _ = split(index, at: chunks[index].covered + ahead) }
        chunks[index].inFlight += 1
        return request(index)
    }

    /// Cuts chunk `index` at `offset` (inside it, past what is written): the first part keeps its
    /// transfers, which stop at the cut; the second is a new, idle chunk. Its index is returned.
    private mutating func split(_ index: Int, at offset: Int64) -> Int {
        var tail = chunks[index]
        tail.start = offset
        tail.covered = offset
        tail.inFlight = 0
        tail.failures = 0
        chunks[index].end = offset
        chunks.append(tail)
        order.insert(chunks.count - 1, at: (order.firstIndex(of: index) ?? order.count - 1) + 1)
        return chunks.count - 1
    }

    /// Where in ``order`` the chunk holding byte `offset` is (nil: past the end).
    private func position(of offset: Int64) -> Int? {
        // Binary search: the last chunk starting at or before `offset`.
        var low = 0
        var high = order.count
        while low < high {
            let middle = (low + high) / 2
            if chunks[order[middle]].start <= offset { low = middle + 1 } else { high = middle }
        }
        guard low > 0, offset < chunks[order[low - 1]].end else { return nil }
        return low - 1
    }

    /// The chunk holding the first byte a reader waits for, if it is not written yet.
    private var neededChunk: Int? {
        guard let neededOffset else { return nil }
        let missing = neededOffset + contiguousBytes(from: neededOffset)
        guard let position = position(of: missing) else { return nil }
        return chunks[order[position]].isDone ? nil : order[position]
    }

    /// Whether a player can start reading the file at `offset` and play `length` bytes from there
    /// without waiting: the file's first `headerBytes` are there (what a player reads before
    /// anything else) and every byte from `offset` to `offset + length`. A player reads forward
    /// through a gap up to `readThrough` long rather than seek across it, from wherever it stands
    /// after its first reads: at least `headerBytes` in, at most as far as the bytes from the start
    /// go. So an offset that near what is there from the start needs every byte before it too.
    /// (Seen under loss: the station's position 263 KB in, 256 KB being the header and the
    /// read-through, the bytes from 0 to 181 KB there: mpv read on from 181 KB and waited 2.3 s.)
    /// Tells the plan where the reader is to read next (``need(offset:)``): the offset, or the end
    /// of the bytes from the start when the player will read on from there. The file's last
    /// `tailBytes` must be there too, once all else is: a player opening a file reads what follows
    /// its audio (a WAV's chunks after the data, an MP3's ID3v1 tag) before it plays (seen: mpv
    /// waited 3 s at load for the last 100 bytes of a demo WAV, its tags, under 25 % loss).
    public mutating func isReadable(
        offset: Int64, length: Int64, headerBytes: Int64, readThrough: Int64, tailBytes: Int64 = 0
    ) -> Bool {
        guard isReadable(offset: offset, length: length, headerBytes: headerBytes, readThrough: readThrough),
            let total = totalBytes
        else { return false }
        let tailStart = max(0, total - max(0, tailBytes))
        let tail = contiguousBytes(from: tailStart)
        guard tailStart + tail < total else { return true }
        need(offset: tailStart + tail)
        return false
    }

    private mutating func isReadable(offset: Int64, length: Int64, headerBytes: Int64, readThrough: Int64) -> Bool {
        guard let total = totalBytes else { return false }
        let offset = min(max(0, offset), total)
        let end = min(total, offset + max(1, length))
        let prefix = contiguousBytes(from: 0)
        if prefix >= end { return true }
        if offset <= max(headerBytes, prefix) + readThrough {
            // The player reads every byte up to the offset: the bytes from the start must reach the end.
            need(offset: prefix)
            return false
        }
        need(offset: offset)
        return prefix >= min(total, headerBytes) && contiguousBytes(from: offset) >= end - offset
    }

    /// For the debug log: the chunk holding byte `offset` (bounds, how far written, transfers on it).
    public func describe(offset: Int64) -> String {
        guard let position = position(of: offset) else { return "past the end" }
        let index = order[position]
        let chunk = chunks[index]
        return "chunk \(index) [\(chunk.start), \(chunk.end)) covered to \(chunk.covered), "
            + "\(chunk.inFlight) in flight, \(chunk.failures) failed"
    }

    /// An answer said the whole file has `total` bytes.
    public mutating func learned(totalBytes total: Int64) {
        if let known = totalBytes {
            if known != total { failure = "the file changed size during the download (\(known) then \(total) bytes)" }
            return
        }
        guard total > 0 else {
            failure = "the file is empty"
            return
        }
        totalBytes = total
        let count = Int((total + configuration.chunkBytes - 1) / configuration.chunkBytes)
        if chunks.count > count { chunks.removeLast(chunks.count - count) }
        order = Array(0..<count)
        for index in 0..<count {
            let start = Int64(index) * configuration.chunkBytes
            let end = min(total, start + configuration.chunkBytes)
            if index < chunks.count {
                chunks[index].end = end
                chunks[index].covered = min(chunks[index].covered, end)
            } else {
                chunks.append(Chunk(start: start, end: end, covered: start))
            }
        }
    }

    /// `request` has written `bytes` bytes from its start so far.
    public mutating func progress(_ request: Request, bytes: Int64) {
        guard request.chunk < chunks.count, request.start <= chunks[request.chunk].covered else { return }
        chunks[request.chunk].covered = min(
            chunks[request.chunk].end, max(chunks[request.chunk].covered, request.start + bytes))
    }

    /// Whether `request` still brings anything (false once its chunk is done, or past the end):
    /// its transfer can stop.
    public func isWanted(_ request: Request) -> Bool {
        failure == nil && request.chunk < chunks.count && !chunks[request.chunk].isDone
    }

    /// The bytes `request` may write at `offset` from its start: it is never allowed past its chunk's end.
    public func writableBytes(_ request: Request, offset: Int64, count: Int64) -> Int64 {
        guard request.chunk < chunks.count else { return 0 }
        return max(0, min(count, chunks[request.chunk].end - (request.start + offset)))
    }

    /// `request`'s transfer ended: `ok` when it brought all it asked for (or its chunk is done),
    /// otherwise its chunk is asked again from where it stopped.
    public mutating func ended(_ request: Request, ok: Bool) {
        guard request.chunk < chunks.count else { return }
        chunks[request.chunk].inFlight = max(0, chunks[request.chunk].inFlight - 1)
        guard !ok, !chunks[request.chunk].isDone else { return }
        chunks[request.chunk].failures += 1
        if chunks[request.chunk].failures >= configuration.maxFailuresPerChunk {
            failure = "bytes from \(chunks[request.chunk].covered) failed \(chunks[request.chunk].failures) times"
        }
    }

    /// `request` was past the end of the file (416): nothing to retry. Only a refused first byte
    /// means the file cannot be fetched (a speculative chunk past the end of a short file is no harm).
    public mutating func beyondEnd(_ request: Request) {
        guard request.chunk < chunks.count else { return }
        chunks[request.chunk].inFlight = max(0, chunks[request.chunk].inFlight - 1)
        if request.start == 0 { failure = "the server refused the first byte (416)" }
    }

    /// The download cannot go on (the server does not do ranges, the file cannot be written).
    public mutating func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }

    private func request(_ index: Int) -> Request {
        Request(chunk: index, start: chunks[index].covered, end: chunks[index].end - 1)
    }
}

/// The listener's media cache, the pure parts: file names and which files go.
public enum MediaCachePlan {
    /// The ID prefix of the DJ's library tracks (`LocalLibrary`).
    public static let localPrefix = "local:"

    /// The cache file's name for a URL (the same on every run).
    public static func fileName(for url: String) -> String {
        Hex.encode(FNV1a64.hash(Array(url.utf8))) + ".media"
    }

    /// The files to delete so that at most `keep` remain: the oldest first, never one in `kept`.
    public static func victims(_ files: [(name: String, modifiedNs: Int64)], keep: Int, kept: Set<String>) -> [String] {
        let sorted = files.sorted { ($0.modifiedNs, $0.name) > ($1.modifiedNs, $1.name) }
        var slots = keep - files.filter { kept.contains($0.name) }.count
        var victims: [String] = []
        for file in sorted where !kept.contains(file.name) {
            if slots > 0 { slots -= 1 } else { victims.append(file.name) }
        }
        return victims
    }

    /// How many of the tracks that play next a listener fetches ahead.
    public static let prefetchCount = NextSources.Limit.maxEntries

    /// What a listener fetches ahead, in order: the sources of the first ``prefetchCount`` tracks
    /// that play next (`upNext`'s entries not awaiting approval, or, before the queue list came,
    /// the next sources' own order), the playing track left out. A catalog track's source is the
    /// one the DJ sent in `sources`; a library track's is derived from the playing track's URL
    /// (``source(ofLocalTrack:after:)``) when the DJ sent none. A track with neither is skipped.
    public static func prefetch(current: Track?, upNext: QueueList?, sources: NextSources?) -> [String] {
        let ids: [String] =
            upNext.map { list in list.entries.filter { !$0.awaitingApproval }.map(\.trackID) }
            ?? sources?.entries.map(\.trackID) ?? []
        var urls: [String] = []
        for id in ids where id != current?.id {
            guard urls.count < prefetchCount else { break }
            let url = sources?.source(of: id) ?? current.flatMap { source(ofLocalTrack: id, after: $0) }
            guard let url, url != current?.source, !urls.contains(url) else { continue }
            urls.append(url)
        }
        return urls
    }

    /// Where the DJ serves the local track `nextTrackID`, from the URL it serves `current` at: a
    /// DJ's library track is at `…/media/<token>`, the token being its ID's hash (`local:<token>`;
    /// see `LocalLibrary`). Nil for catalog tracks or a URL of another shape.
    public static func source(ofLocalTrack nextTrackID: String, after current: Track) -> String? {
        let prefix = localPrefix
        guard current.id.hasPrefix(prefix), nextTrackID.hasPrefix(prefix) else { return nil }
        let currentToken = current.id.dropFirst(prefix.count)
        let nextToken = nextTrackID.dropFirst(prefix.count)
        guard isToken(currentToken), isToken(nextToken),
            current.source.hasPrefix("http://") || current.source.hasPrefix("https://"),
            current.source.hasSuffix("/media/" + currentToken)
        else { return nil }
        return String(current.source.dropLast(currentToken.count)) + nextToken
    }

    private static func isToken(_ token: Substring) -> Bool {
        (1...64).contains(token.utf8.count)
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }
}
