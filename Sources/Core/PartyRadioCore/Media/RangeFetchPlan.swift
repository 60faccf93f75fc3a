/// The bookkeeping of one parallel, ranged download (docs/MEDIA.md, "Fetching ahead"): which byte
/// ranges to ask for next, how far each chunk got, what to retry and from where. Pure: the media
/// adapter's worker threads call it under one lock and do the transfers.
///
/// The file is cut into chunks of ``Configuration/chunkBytes``. Before its size is known, the first
/// ``Configuration/speculativeChunks`` chunks are handed out at once, the first of them in pieces
/// of ``Configuration/startPieceBytes`` (each answer's `Content-Range` tells the size, so no round
/// trip is spent on asking for it first; a chunk past the end is answered 416 and dropped). A failed or stalled transfer is asked again from where its chunk
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
///
/// Before a player starts, the bytes its start needs (``startRanges``: the file's tail, its first
/// bytes, the span at the station position) go before everything else, in pieces on every free
/// connection, and a piece that brings nothing for a while is asked for again
/// (``Configuration/startStallNs``; the plan is given the time, ``next(nowNs:)``).
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
        /// The size of the pieces a start's bytes (``isReadable(offset:length:headerBytes:readThrough:tailBytes:leadBytes:)``)
        /// are fetched in, each on a connection of its own, and of the first chunk's speculative
        /// requests: on a lossy link one connection brings a few tens of KB a second, and a piece
        /// that waits out a retransmission timeout holds up less.
        public var startPieceBytes: Int64
        /// A piece a start needs whose transfers have brought nothing for this long is asked for
        /// again on the next free connection (up to ``RangeFetchPlan/maxTransfersWhenStalled``
        /// transfers): a little more than the kernel's first retransmission timeout (200 ms).
        public var startStallNs: Int64

        public init(
            chunkBytes: Int64 = 256 << 10, speculativeChunks: Int = 6, maxFailuresPerChunk: Int = 40,
            minimumHedgeBytes: Int64 = 8 << 10, minimumSplitBytes: Int64 = 32 << 10,
            startPieceBytes: Int64 = 64 << 10, startStallNs: Int64 = 300_000_000
        ) {
            self.chunkBytes = max(1, chunkBytes)
            self.speculativeChunks = max(1, speculativeChunks)
            self.maxFailuresPerChunk = max(1, maxFailuresPerChunk)
            self.minimumHedgeBytes = max(1, minimumHedgeBytes)
            self.minimumSplitBytes = max(1, minimumSplitBytes)
            self.startPieceBytes = max(1, startPieceBytes)
            self.startStallNs = max(0, startStallNs)
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
        /// When a transfer of it last started or moved `covered` on (the plan's clock, ns).
        var activeNs: Int64 = 0
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
    /// The bytes a start from this file still waits for (the last ``isReadable(offset:length:headerBytes:readThrough:tailBytes:leadBytes:)``
    /// that said no): fetched before anything else, in pieces, the tail first.
    public private(set) var startRanges: [Range<Int64>] = []
    /// The latest time the plan was given (ns, any monotonic clock): when a piece last moved.
    private var nowNs: Int64 = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Every byte is written.
    public var isComplete: Bool { totalBytes != nil && chunks.allSatisfy(\.isDone) }

    /// Bytes written without a gap, summed over the chunks.
    public var coveredBytes: Int64 { chunks.reduce(0) { $0 + ($1.covered - $1.start) } }

    /// The next transfer to start, or nil when there is none now (all handed out, complete or failed).
    /// `nowNs`: the time on any monotonic clock, the same for every call (what a start's stalled
    /// pieces are timed by).
    public mutating func next(nowNs: Int64 = 0) -> Request? {
        guard failure == nil, !isComplete else { return nil }
        tick(nowNs)
        guard totalBytes != nil else {
            // Size unknown: the first chunks at fixed offsets, once each; the first in pieces (what
            // a player reads first). One whose transfer failed before any answer told the size is
            // asked again (else a download whose every first transfer failed, a lost SYN each,
            // would wait for ever).
            if let retry = chunks.indices.first(where: { chunks[$0].inFlight == 0 && !chunks[$0].isDone }) {
                return start(retry)
            }
            guard chunks.count < configuration.speculativeChunks else { return nil }
            let start = chunks.last?.end ?? 0
            let length =
                start < configuration.chunkBytes
                ? min(piece, configuration.chunkBytes - start) : configuration.chunkBytes
            chunks.append(Chunk(start: start, end: start + length, covered: start, inFlight: 1))
            order.append(chunks.count - 1)
            return request(chunks.count - 1)
        }
        if let hedge = takeStalled() { return hedge }
        if let start = nextForStart() { return start }
        let starting = isStartPending
        let waiting = neededChunk
        // In file order, from the chunk a reader waits for (the start when no one reads yet).
        let idle = order.filter { !chunks[$0].isDone && chunks[$0].inFlight == 0 }
        let from = waiting.map { chunks[$0].start } ?? 0
        if let index = idle.first(where: { chunks[$0].start >= from }) ?? idle.first {
            // While a start waits, a piece at a time: the connection is soon free again for one of
            // its pieces that stalls, and a request that ends where asked keeps its connection.
            return start(starting ? capped(index) : index)
        }
        if starting { return nil }
        // Everything is in flight: help the chunk a reader waits for, else the one with the most left to go.
        let candidates = chunks.indices.filter {
            !chunks[$0].isDone && chunks[$0].inFlight == 1
                && chunks[$0].end - chunks[$0].covered >= configuration.minimumHedgeBytes
        }
        if let waiting, candidates.contains(waiting) { return help(waiting) }
        let mostLeft = candidates.max { chunks[$0].end - chunks[$0].covered < chunks[$1].end - chunks[$1].covered }
        guard let index = mostLeft else { return nil }
        return start(index)
    }

    /// A second connection for chunk `index`, whose one transfer a reader waits on: the part of it
    /// from 64 KB ahead (two ``Configuration/minimumSplitBytes``) when there is much more left, so
    /// that the two bring what the reader reads next in parallel; otherwise the same rest again
    /// (a hedge: on a lossy link one of them is often stuck in a retransmission back-off).
    private mutating func help(_ index: Int, capped: Bool = false) -> Request {
        let ahead = 2 * configuration.minimumSplitBytes
        var target = index
        if chunks[index].end - chunks[index].covered >= 2 * ahead {
            target = split(index, at: chunks[index].covered + ahead)
            if capped { target = self.capped(target) }
        }
        return start(target)
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
    /// that holds it is far before it; else the rest of that chunk, a second time if need be;
    /// never more than a piece (``Configuration/startPieceBytes``) at a time.
    public mutating func nextForReader(nowNs: Int64 = 0) -> Request? {
        guard failure == nil, !isComplete, totalBytes != nil else { return nil }
        tick(nowNs)
        // While a start waits, this connection serves only its pieces, and is free to ask again
        // for one that stalls.
        if isStartPending { return nextForStart() }
        guard let neededOffset, var index = neededChunk else { return nil }
        if let hedge = takeStalled() { return hedge }
        let missing = neededOffset + contiguousBytes(from: neededOffset)
        if missing - chunks[index].covered >= configuration.minimumSplitBytes {
            index = split(index, at: missing)
        }
        let chunk = chunks[index]
        if chunk.inFlight == 0 {
            return start(capped(index))
        }
        guard chunk.inFlight == 1, chunk.end - chunk.covered >= configuration.minimumHedgeBytes else { return nil }
        return help(index, capped: true)
    }

    /// Chunk `index` cut to a piece (``Configuration/startPieceBytes``) from where it stopped, the
    /// rest split off (a new, idle chunk). What a start's transfers and the reader's connection
    /// take, so that the connection is soon free again for the bytes a reader stalls on. (Seen at
    /// 25 % loss: the reader's connection took 192 KB ahead of the player, 3.5 s at that loss,
    /// while the player waited 5.4 s on bytes whose three transfers went to new connections, each
    /// losing its SYN.)
    private mutating func capped(_ index: Int) -> Int {
        let covered = chunks[index].covered
        if chunks[index].end - covered > piece { _ = split(index, at: covered + piece) }
        return index
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
        return start(index)
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
    /// of the bytes from the start when the player will read on from there (the tail's once all
    /// else is there). The file's last `tailBytes` must be there too: a player opening a file reads what follows
    /// its audio (a WAV's chunks after the data, an MP3's ID3v1 tag) before it plays (seen: mpv
    /// waited 3 s at load for the last 100 bytes of a demo WAV, its tags, under 25 % loss).
    ///
    /// While the answer is no, what the start needs (the tail, the bytes from the start, the span)
    /// is the plan's ``startRanges``: fetched before anything else, in pieces on every free
    /// connection, and asked for again when a piece stalls (``next(nowNs:)``). A yes clears them:
    /// the player loads the file and its reads tell the plan where it reads (``need(offset:)``).
    ///
    /// `leadBytes`: how far before `offset` the player may read from: the start waits for the bytes
    /// from there too, and the plan fetches from there. (Seen at 25 % loss: a start planned with
    /// the span from 0.5 s past the station position, the player made already, so loaded in 30 ms
    /// at 4.15 s; mpv read from 3.99 s, bytes not there, and stood still for 1.25 s.)
    public mutating func isReadable(
        offset: Int64, length: Int64, headerBytes: Int64, readThrough: Int64, tailBytes: Int64 = 0,
        leadBytes: Int64 = 0
    ) -> Bool {
        guard let total = totalBytes else { return false }
        let tailStart = max(0, total - max(0, tailBytes))
        let (readable, ranges) = startNeeds(
            offset: offset, length: length, headerBytes: headerBytes, readThrough: readThrough,
            leadBytes: leadBytes)
        startRanges = (tailStart < total ? [tailStart..<total] : []) + ranges
        guard readable else { return false }
        let tail = contiguousBytes(from: tailStart)
        guard tailStart + tail < total else {
            startRanges = []
            return true
        }
        need(offset: tailStart + tail)
        return false
    }

    /// Whether the bytes a start at `offset` needs, the tail aside, are there, and which they are.
    private mutating func startNeeds(
        offset: Int64, length: Int64, headerBytes: Int64, readThrough: Int64, leadBytes: Int64
    ) -> (Bool, [Range<Int64>]) {
        guard let total = totalBytes else { return (false, []) }
        let offset = min(max(0, offset), total)
        let end = min(total, offset + max(1, length))
        let prefix = contiguousBytes(from: 0)
        if prefix >= end { return (true, []) }
        if offset <= max(headerBytes, prefix) + readThrough {
            // The player reads every byte up to the offset: the bytes from the start must reach the end.
            need(offset: prefix)
            return (false, [0..<end])
        }
        let header = min(total, headerBytes)
        let seek = max(header, offset - max(0, leadBytes))
        need(offset: seek)
        let readable = prefix >= header && contiguousBytes(from: seek) >= end - seek
        return (readable, header < seek ? [0..<header, seek..<end] : [0..<end])
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
        // The speculative chunks keep their bounds, cut at the end (one wholly past it stays, empty
        // and done, so that its transfer's index still names it); the rest of the file follows in chunks.
        for index in chunks.indices {
            chunks[index].start = min(total, chunks[index].start)
            chunks[index].end = min(total, chunks[index].end)
            chunks[index].covered = min(chunks[index].covered, chunks[index].end)
        }
        var start = chunks.last?.end ?? 0
        while start < total {
            let end = min(total, start + configuration.chunkBytes)
            chunks.append(Chunk(start: start, end: end, covered: start))
            start = end
        }
        order = chunks.indices.filter { chunks[$0].start < chunks[$0].end }
    }

    /// `request` has written `bytes` bytes from its start so far (at `nowNs`, as for ``next(nowNs:)``).
    public mutating func progress(_ request: Request, bytes: Int64, nowNs: Int64 = 0) {
        guard request.chunk < chunks.count, request.start <= chunks[request.chunk].covered else { return }
        tick(nowNs)
        let covered = min(chunks[request.chunk].end, max(chunks[request.chunk].covered, request.start + bytes))
        if covered > chunks[request.chunk].covered {
            chunks[request.chunk].covered = covered
            chunks[request.chunk].activeNs = self.nowNs
        }
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
        // Its bytes are not in the file: the chunk is empty (and done), never asked again.
        if totalBytes == nil {
            chunks[request.chunk].end = chunks[request.chunk].start
            chunks[request.chunk].covered = chunks[request.chunk].start
        }
    }

    /// The download cannot go on (the server does not do ranges, the file cannot be written).
    public mutating func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }

    /// A transfer of chunk `index` from where it stopped, starting now.
    private mutating func request(_ index: Int) -> Request {
        chunks[index].activeNs = nowNs
        return Request(chunk: index, start: chunks[index].covered, end: chunks[index].end - 1)
    }

    private mutating func tick(_ now: Int64) { nowNs = max(nowNs, now) }

    /// The size of a start's pieces (never more than a chunk).
    private var piece: Int64 { min(configuration.startPieceBytes, configuration.chunkBytes) }

    /// Whether some byte a start waits for (``startRanges``) is not written yet.
    var isStartPending: Bool { !startParts.isEmpty }

    /// What a start still waits for, chunk by chunk in the order of ``startRanges``: each chunk
    /// holding such bytes, and the unwritten bytes of it that lie within a range.
    private var startParts: [(index: Int, from: Int64, to: Int64)] {
        var parts: [(index: Int, from: Int64, to: Int64)] = []
        for range in startRanges {
            var offset = range.lowerBound
            while offset < range.upperBound, let position = position(of: offset) {
                let index = order[position]
                let chunk = chunks[index]
                offset = chunk.end
                let from = max(range.lowerBound, chunk.covered)
                let to = min(range.upperBound, chunk.end)
                if from < to { parts.append((index, from, to)) }
            }
        }
        return parts
    }

    /// The next transfer for what a start waits for (nil: nothing of it to start now). Its bytes
    /// that no transfer brings, or that one reaches only after a piece (``Configuration/startPieceBytes``),
    /// go out as pieces of their own, on as many connections as there are free, the file's tail
    /// first; once every one is on its way, the piece whose transfers have brought nothing for
    /// longest is asked for again when that is at least ``Configuration/startStallNs`` (at most
    /// ``maxTransfersWhenStalled`` transfers of it). On a lossy link the transfer of a start's last
    /// bytes was what a slow start waited for: seen at 25 % loss, 3.6 KB of the file's tail on one
    /// connection that had brought nothing for 4 s, whose chunk was too short to be hedged.
    private mutating func nextForStart() -> Request? {
        guard totalBytes != nil else { return nil }
        var stalled: Int?
        for (index, from, to) in startParts {
            let chunk = chunks[index]
            if chunk.inFlight == 0 {
                return start(capped(from > chunk.covered ? split(index, at: from) : index))
            }
            if to > chunk.covered + piece {
                // Its transfer would bring the rest only after a piece: the rest goes on another connection.
                return start(capped(split(index, at: max(chunk.covered + piece, from))))
            }
            if chunk.inFlight < Self.maxTransfersWhenStalled && nowNs - chunk.activeNs >= configuration.startStallNs
                && stalled.map({ chunks[$0].activeNs > chunk.activeNs }) ?? true
            {
                stalled = index
            }
        }
        // Only its next piece is raced; the rest is split off, handed out as above.
        return stalled.map { start(capped($0)) }
    }

    /// One more transfer of chunk `index`.
    private mutating func start(_ index: Int) -> Request {
        chunks[index].inFlight += 1
        return request(index)
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
