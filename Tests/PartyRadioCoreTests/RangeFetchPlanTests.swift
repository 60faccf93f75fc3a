import PartyRadioCore
import Testing

@Suite("RangeFetchPlan and MediaCachePlan: parallel ranged fetches, cache eviction, next track's URL")
struct RangeFetchPlanTests {
    private let small = RangeFetchPlan.Configuration(
        chunkBytes: 100, speculativeChunks: 3, maxFailuresPerChunk: 3, minimumHedgeBytes: 10)
    private let split = RangeFetchPlan.Configuration(
        chunkBytes: 100, speculativeChunks: 3, maxFailuresPerChunk: 3, minimumHedgeBytes: 10, minimumSplitBytes: 20)

    @Test("Before the size is known, the first chunks go out at fixed offsets, once each")
    func speculativeStart() {
        var plan = RangeFetchPlan(configuration: small)
        let requests = (0..<5).compactMap { _ in plan.next() }
        #expect(requests.map(\.rangeHeader) == ["bytes=0-99", "bytes=100-199", "bytes=200-299"])
        #expect(!plan.isComplete && plan.totalBytes == nil)
    }

    @Test("The size splits the file into chunks; the last is short; a chunk past the end is dropped")
    func learnSize() {
        var plan = RangeFetchPlan(configuration: small)
        let first = plan.next()!
        _ = plan.next()
        let third = plan.next()!
        plan.learned(totalBytes: 150)
        #expect(plan.totalBytes == 150)
        #expect(!plan.isWanted(third), "bytes 200-299 are past the end")
        plan.beyondEnd(third)
        #expect(plan.failure == nil)
        plan.progress(first, bytes: 100)
        plan.ended(first, ok: true)
        let second = RangeFetchPlan.Request(chunk: 1, start: 100, end: 199)
        #expect(plan.writableBytes(second, offset: 0, count: 100) == 50, "never past the file's end")
        plan.progress(second, bytes: 50)
        plan.ended(second, ok: true)
        #expect(plan.isComplete && plan.coveredBytes == 150)
        #expect(plan.next() == nil)
    }

    @Test("Every chunk is asked for once, in order, then the one with most left is asked again (hedged)")
    func orderAndHedge() {
        var plan = RangeFetchPlan(configuration: small)
        plan.learned(totalBytes: 350)
        let requests = (0..<4).compactMap { _ in plan.next() }
        #expect(requests.map(\.rangeHeader) == ["bytes=0-99", "bytes=100-199", "bytes=200-299", "bytes=300-349"])
        plan.progress(requests[0], bytes: 100)
        plan.ended(requests[0], ok: true)
        plan.progress(requests[1], bytes: 95)
        plan.progress(requests[2], bytes: 20)
        plan.progress(requests[3], bytes: 45)
        let hedge = plan.next()
        #expect(hedge?.rangeHeader == "bytes=220-299", "the rest of the chunk with most left")
        #expect(plan.next() == nil, "1 and 3 (5 left each) are below the hedge minimum; 2 has two transfers")
        // The hedge finishes first: the chunk is done and the slow transfer is no longer wanted.
        plan.progress(hedge!, bytes: 80)
        #expect(!plan.isWanted(requests[2]))
        plan.ended(hedge!, ok: true)
        plan.ended(requests[2], ok: false)
        #expect(plan.failure == nil, "a superseded transfer is no failure")
    }

    @Test("What a reader may read: the bytes from an offset written without a gap, across chunks")
    func contiguousBytes() {
        var plan = RangeFetchPlan(configuration: small)
        #expect(plan.contiguousBytes(from: 0) == 0, "nothing yet")
        let requests = (0..<3).compactMap { _ in plan.next() }
        plan.learned(totalBytes: 250)
        plan.progress(requests[0], bytes: 100)
        plan.progress(requests[1], bytes: 30)
        plan.progress(requests[2], bytes: 50)
        #expect(plan.contiguousBytes(from: 0) == 130, "all of chunk 0 and the start of chunk 1")
        #expect(plan.contiguousBytes(from: 120) == 10)
        #expect(plan.contiguousBytes(from: 130) == 0, "the gap in chunk 1")
        #expect(plan.contiguousBytes(from: 200) == 50, "chunk 2, the file's end")
        #expect(plan.contiguousBytes(from: 250) == 0 && plan.contiguousBytes(from: 10_000) == 0, "past the end")
        #expect(plan.contiguousBytes(from: -5) == 0 && plan.contiguousBytes(from: .max) == 0, "nonsense offsets")
        plan.progress(requests[1], bytes: 100)
        #expect(plan.contiguousBytes(from: 0) == 250 && plan.isComplete)
    }

    @Test(
        "Chunks go out in file order; a reader's offset goes first, and its chunk is hedged before the one with most left"
    )
    func readerFirst() {
        var plan = RangeFetchPlan(configuration: small)
        plan.learned(totalBytes: 600)
        #expect(plan.next()?.start == 0, "the start first when no one reads")
        plan.need(offset: 350)
        let next = (0..<2).compactMap { _ in plan.next() }
        #expect(next.map(\.start) == [300, 400], "from the chunk the reader waits for on")
        let rest = (0..<3).compactMap { _ in plan.next() }
        #expect(rest.map(\.start) == [500, 100, 200], "then what is left, in file order")
        // Every chunk in flight: chunk 3 (the reader's, 60 left) is hedged before chunk 1 (100 left).
        plan.progress(next[0], bytes: 40)
        #expect(plan.next()?.rangeHeader == "bytes=340-399")
        // Once its chunk is done, the reader waits for the next one's first missing byte.
        var other = RangeFetchPlan(configuration: small)
        other.learned(totalBytes: 300)
        let all = (0..<3).compactMap { _ in other.next() }
        other.progress(all[0], bytes: 100)
        other.progress(all[1], bytes: 10)
        other.need(offset: 50)
        #expect(other.next()?.rangeHeader == "bytes=110-199", "chunk 1 holds the reader's first missing byte")
        other.need(offset: .max)
        #expect(other.next()?.rangeHeader == "bytes=200-299", "an offset past the end changes nothing: most left")
    }

    @Test("A reader far ahead of a chunk's transfer gets its first missing byte in a chunk of its own")
    func readerSplits() {
        var plan = RangeFetchPlan(configuration: split)
        #expect(plan.nextForReader() == nil, "no size, no reader: nothing")
        let requests = (0..<3).compactMap { _ in plan.next() }
        plan.learned(totalBytes: 300)
        #expect(plan.nextForReader() == nil, "no one reads yet")
        plan.progress(requests[0], bytes: 100)
        plan.progress(requests[1], bytes: 10)
        plan.need(offset: 150)
        // Chunk 1's transfer is at 110, 40 before the reader: its rest from 150 is a chunk of its own.
        let reader = plan.nextForReader()
        #expect(reader?.rangeHeader == "bytes=150-199")
        #expect(plan.writableBytes(requests[1], offset: 10, count: 100) == 40, "the old transfer stops at the cut")
        plan.progress(reader!, bytes: 20)
        #expect(plan.contiguousBytes(from: 150) == 20 && plan.contiguousBytes(from: 0) == 110)
        #expect(plan.nextForReader()?.rangeHeader == "bytes=170-199", "its own chunk, hedged")
        #expect(plan.nextForReader() == nil, "two transfers at most")
        plan.progress(requests[1], bytes: 50)
        #expect(!plan.isWanted(requests[1]), "done at the cut")
        plan.progress(reader!, bytes: 50)
        plan.progress(requests[2], bytes: 100)
        #expect(plan.isComplete && plan.contiguousBytes(from: 0) == 300 && plan.coveredBytes == 300)
        #expect(plan.nextForReader() == nil && plan.next() == nil)
    }

    @Test("A reader close behind a transfer: a second one from a little ahead, or the same rest when little is left")
    func readerHedges() {
        var plan = RangeFetchPlan(configuration: split)
        plan.learned(totalBytes: 300)
        let requests = (0..<3).compactMap { _ in plan.next() }
        plan.progress(requests[0], bytes: 95)
        plan.need(offset: 40)
        #expect(plan.nextForReader() == nil, "5 left: not worth a second transfer")
        var other = RangeFetchPlan(configuration: split)
        other.learned(totalBytes: 300)
        let first = other.next()!
        other.progress(first, bytes: 20)
        other.need(offset: 25)  // 5 past the transfer: below the split minimum
        // 80 left in the reader's chunk: a second connection takes the part from 40 ahead of its
        // transfer, so that both bring what the reader reads next.
        #expect(other.nextForReader()?.rangeHeader == "bytes=60-99")
        #expect(other.writableBytes(first, offset: 20, count: 100) == 40, "the first transfer stops at 60")
        other.need(offset: 250)  // chunk 2, not asked for yet: split at 250, fetched from there
        #expect(other.nextForReader()?.rangeHeader == "bytes=250-299")
        #expect(other.next()?.rangeHeader == "bytes=100-199", "then the others, in file order")
        #expect(other.next()?.rangeHeader == "bytes=200-249")
    }

    @Test("A start needs the header and its span; near the bytes from the start, every byte before it too")
    func startCondition() {
        var plan = RangeFetchPlan(configuration: small)
        let readable1 = plan.isReadable(offset: 0, length: 10, headerBytes: 100, readThrough: 100)
        #expect(!readable1, "size unknown")
        plan.learned(totalBytes: 1000)
        let requests = (0..<10).compactMap { _ in plan.next() }
        plan.progress(requests[0], bytes: 100)
        plan.progress(requests[1], bytes: 80)  // 0..<180 from the start
        plan.progress(requests[2], bytes: 100)
        plan.progress(requests[3], bytes: 50)  // 250..<350 at the offset
        // 250 is past header + read-through (200) but within the read-through of 180: the player reads
        // on from 180, so the start waits for the gap, and the plan is told to fetch from there.
        let readable2 = plan.isReadable(offset: 250, length: 100, headerBytes: 100, readThrough: 100)
        #expect(!readable2)
        #expect(plan.neededOffset == 180)
        plan.progress(requests[1], bytes: 100)
        let readable3 = plan.isReadable(offset: 250, length: 100, headerBytes: 100, readThrough: 100)
        #expect(readable3, "all from 0 to 350")
        // Far from the bytes from the start: the player seeks, so the header and the span suffice.
        plan.progress(requests[6], bytes: 100)
        let readable4 = plan.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100)
        #expect(readable4)
        #expect(plan.neededOffset == 600)
        let readable5 = plan.isReadable(offset: 600, length: 150, headerBytes: 100, readThrough: 100)
        #expect(!readable5, "the span is not all there")
        var short = RangeFetchPlan(configuration: small)
        short.learned(totalBytes: 50)
        let only = short.next()!
        short.progress(only, bytes: 50)
        let readable6 = short.isReadable(offset: 0, length: 500, headerBytes: 100, readThrough: 100)
        #expect(readable6, "a file shorter than both")
    }

    @Test("A start needs the file's tail too, once all else is there, and the plan is told to fetch it")
    func startNeedsTheTail() {
        var plan = RangeFetchPlan(configuration: small)
        plan.learned(totalBytes: 1000)
        let requests = (0..<10).compactMap { _ in plan.next() }
        plan.progress(requests[0], bytes: 100)
        plan.progress(requests[6], bytes: 100)  // 600..<700: the span
        let withoutTail = plan.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100)
        #expect(withoutTail)
        let beforeTail = plan.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100, tailBytes: 30)
        #expect(!beforeTail)
        #expect(plan.neededOffset == 970, "the tail's first missing byte")
        plan.progress(requests[9], bytes: 80)  // 900..<980: not yet the last 20
        let partTail = plan.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100, tailBytes: 30)
        #expect(!partTail)
        #expect(plan.neededOffset == 980)
        plan.progress(requests[9], bytes: 100)  // bytes so far in that transfer
        let withTail = plan.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100, tailBytes: 30)
        #expect(withTail)
        // The header still comes first: without it the plan is told to fetch that, not the tail.
        var fresh = RangeFetchPlan(configuration: small)
        fresh.learned(totalBytes: 1000)
        let first = fresh.next()!
        fresh.progress(first, bytes: 40)
        let noHeader = fresh.isReadable(offset: 600, length: 100, headerBytes: 100, readThrough: 100, tailBytes: 30)
        #expect(!noHeader)
        #expect(fresh.neededOffset == 600)
    }

    @Test("A reader stalled on a transfer gets the same bytes again on the next free connection, at most three at once")
    func stalledReader() {
        var plan = RangeFetchPlan(configuration: split)
        plan.learned(totalBytes: 300)
        let requests = (0..<3).compactMap { _ in plan.next() }
        plan.progress(requests[0], bytes: 10)
        plan.need(offset: 10)
        plan.readerStalled()
        // The next 40 bytes (two split minimums) are raced; the rest of the chunk is split off.
        let hedge = plan.nextForReader()
        #expect(hedge?.rangeHeader == "bytes=10-49")
        #expect(plan.writableBytes(requests[0], offset: 10, count: 100) == 40, "the stalled transfer stops at 50 too")
        #expect(plan.next()?.rangeHeader == "bytes=50-99", "the rest goes to a free worker")
        plan.readerStalled()
        #expect(plan.next()?.rangeHeader == "bytes=10-49", "stalled again: a third transfer, from a worker")
        plan.readerStalled()
        #expect(plan.nextForReader() == nil, "three at once is the most")
        // The hedge brings the bytes first: the stalled transfers are no longer wanted.
        plan.progress(hedge!, bytes: 40)
        #expect(!plan.isWanted(requests[0]) && plan.contiguousBytes(from: 10) == 40)
        plan.readerStalled()
        #expect(plan.nextForReader()?.rangeHeader == "bytes=50-99", "stalled on its next byte: the next chunk is raced")
    }

    /// Chunks of 100 bytes, a start's pieces of 20, stalled after 300 ns.
    private let pieces = RangeFetchPlan.Configuration(
        chunkBytes: 100, speculativeChunks: 6, maxFailuresPerChunk: 3, minimumHedgeBytes: 10, minimumSplitBytes: 20,
        startPieceBytes: 20, startStallNs: 300)

    @Test("Before the size is known, the first chunk goes out in a start's pieces, the next ones whole")
    func speculativePieces() {
        var plan = RangeFetchPlan(configuration: pieces)
        let requests = (0..<8).compactMap { _ in plan.next() }
        #expect(
            requests.map(\.rangeHeader) == [
                "bytes=0-19", "bytes=20-39", "bytes=40-59", "bytes=60-79", "bytes=80-99", "bytes=100-199",
            ])
        plan.learned(totalBytes: 350)
        // The speculative bounds stay; the rest of the file follows in whole chunks.
        let rest = (0..<2).compactMap { _ in plan.next() }
        #expect(rest.map(\.rangeHeader) == ["bytes=200-299", "bytes=300-349"])
        for request in requests + rest { plan.progress(request, bytes: request.length) }
        #expect(plan.isComplete && plan.coveredBytes == 350 && plan.contiguousBytes(from: 0) == 350)
        // A file shorter than the speculative requests: those past its end are empty, done, not wanted.
        var short = RangeFetchPlan(configuration: pieces)
        let early = (0..<6).compactMap { _ in short.next() }
        short.learned(totalBytes: 50)
        #expect(!short.isWanted(early[3]) && !short.isWanted(early[5]) && short.isWanted(early[2]))
        #expect(short.writableBytes(early[2], offset: 0, count: 20) == 10, "cut at the file's end")
        short.beyondEnd(early[5])
        #expect(short.failure == nil)
        for request in early.prefix(3) { short.progress(request, bytes: request.length) }
        #expect(short.isComplete && short.coveredBytes == 50 && short.next() == nil)
    }

    @Test("A first transfer that fails before any answer told the size is asked again; one refused (416) is not")
    func speculativeRetry() {
        var plan = RangeFetchPlan(configuration: small)
        let requests = (0..<3).compactMap { _ in plan.next() }
        #expect(plan.next() == nil)
        plan.ended(requests[1], ok: false)  // e.g. its SYN lost twice: curl's connect timeout
        plan.beyondEnd(requests[2])  // the file is shorter than 200 bytes
        #expect(plan.next()?.rangeHeader == "bytes=100-199", "asked again, though the size is still unknown")
        #expect(plan.next() == nil, "the refused one is not")
        plan.progress(requests[0], bytes: 100)
        plan.learned(totalBytes: 150)
        #expect(plan.failure == nil && plan.totalBytes == 150)
    }

    @Test("What a start waits for goes out first, in pieces on every free connection, the tail first")
    func startInPieces() {
        var plan = RangeFetchPlan(configuration: pieces)
        plan.learned(totalBytes: 1000)
        // Header 50, the span 500..<560 (far past the read-through) and the 20 bytes before it the
        // player seeks to, the last 30 bytes.
        let readable = plan.isReadable(
            offset: 500, length: 60, headerBytes: 50, readThrough: 100, tailBytes: 30, leadBytes: 20)
        #expect(!readable)
        #expect(plan.startRanges == [970..<1000, 0..<50, 480..<560])
        let requests = (0..<9).compactMap { _ in plan.next() }
        #expect(
            requests.map(\.rangeHeader) == [
                "bytes=970-989", "bytes=990-999", "bytes=0-19", "bytes=20-39", "bytes=40-59", "bytes=480-499",
                "bytes=500-519", "bytes=520-539", "bytes=540-559",
            ])
        #expect(plan.nextForReader() == nil, "every piece on its way, none stalled: the reader's connection waits")
        #expect(plan.next()?.rangeHeader == "bytes=560-579", "a worker goes on from the span, a piece at a time")
        for request in requests where request.start != 480 { plan.progress(request, bytes: request.length) }
        let early = plan.isReadable(
            offset: 500, length: 60, headerBytes: 50, readThrough: 100, tailBytes: 30, leadBytes: 20)
        #expect(!early, "the player may read from 480: those bytes are waited for too")
        #expect(plan.neededOffset == 480)
        plan.progress(requests[5], bytes: requests[5].length)
        let ready = plan.isReadable(
            offset: 500, length: 60, headerBytes: 50, readThrough: 100, tailBytes: 30, leadBytes: 20)
        #expect(ready)
        #expect(plan.startRanges.isEmpty, "the player loads it: its reads say what comes next")
    }

    @Test("A transfer that would reach a start's bytes only after a piece keeps a piece; the rest goes elsewhere")
    func startSplitsTransfers() {
        var plan = RangeFetchPlan(configuration: pieces)
        plan.learned(totalBytes: 400)
        let requests = (0..<4).compactMap { _ in plan.next() }
        #expect(requests.map(\.start) == [0, 100, 200, 300])
        plan.progress(requests[0], bytes: 10)
        // Every byte up to 160 is needed (the span within the read-through); no tail.
        let readable = plan.isReadable(offset: 100, length: 60, headerBytes: 50, readThrough: 100)
        #expect(!readable)
        #expect(plan.startRanges == [0..<160])
        let split = (0..<5).compactMap { _ in plan.nextForReader() }
        #expect(
            split.map(\.rangeHeader) == ["bytes=30-49", "bytes=50-69", "bytes=70-89", "bytes=90-99", "bytes=120-139"])
        #expect(plan.writableBytes(requests[0], offset: 10, count: 100) == 20, "the first transfer stops at 30")
        #expect(plan.writableBytes(requests[1], offset: 0, count: 100) == 20, "chunk 1's at 120")
        #expect(plan.next()?.rangeHeader == "bytes=140-159")
        #expect(plan.next()?.rangeHeader == "bytes=160-179", "then what is left, in file order, a piece at a time")
    }

    @Test("The reader's connection takes a piece at a time, so it is soon free for what the reader stalls on")
    func readerTakesPieces() {
        var plan = RangeFetchPlan(configuration: pieces)
        plan.learned(totalBytes: 1000)
        let first = plan.next()!
        #expect(first.rangeHeader == "bytes=0-99")
        plan.progress(first, bytes: 10)
        plan.need(offset: 400)
        #expect(plan.nextForReader()?.rangeHeader == "bytes=400-419", "an idle chunk: one piece of it")
        plan.need(offset: 10)
        #expect(plan.nextForReader()?.rangeHeader == "bytes=50-69", "the help from ahead of the transfer: a piece")
        // Nothing is lost: what was split off is handed out in file order.
        let rest = (0..<5).compactMap { _ in plan.next() }.map(\.rangeHeader)
        #expect(rest == ["bytes=70-99", "bytes=100-199", "bytes=200-299", "bytes=300-399", "bytes=420-499"])
    }

    @Test("A start's piece that brings nothing for a while is asked for again, at most three at once, however short")
    func startStalls() {
        var plan = RangeFetchPlan(configuration: pieces)
        plan.learned(totalBytes: 212)
        let requests = (0..<3).compactMap { _ in plan.next(nowNs: 1000) }
        plan.progress(requests[2], bytes: 7, nowNs: 1100)  // 200..<207: 5 left, under the hedge minimum
        let readable = plan.isReadable(offset: 0, length: 10, headerBytes: 10, readThrough: 10, tailBytes: 12)
        #expect(!readable)
        plan.progress(requests[0], bytes: 20, nowNs: 1100)
        #expect(plan.contiguousBytes(from: 0) == 20)
        // The tail's 5 bytes: nothing new for 300 ns, then again on the next free connection.
        #expect(plan.nextForReader(nowNs: 1399) == nil)
        #expect(plan.nextForReader(nowNs: 1400)?.rangeHeader == "bytes=207-211")
        #expect(plan.next(nowNs: 1500) == nil, "not stalled again yet, nothing else to start: the worker stays free")
        #expect(plan.nextForReader(nowNs: 1700)?.rangeHeader == "bytes=207-211", "a third transfer 300 ns later")
        #expect(plan.nextForReader(nowNs: 5000) == nil, "three at once is the most")
        plan.progress(requests[2], bytes: 12, nowNs: 5000)
        #expect(!plan.isWanted(requests[2]), "the first to bring them wins")
        let ready = plan.isReadable(offset: 0, length: 10, headerBytes: 10, readThrough: 10, tailBytes: 12)
        #expect(ready)
        // A stalled piece of a long chunk: only its next piece is raced, the rest split off.
        var long = RangeFetchPlan(configuration: pieces)
        long.learned(totalBytes: 200)
        let first = long.next(nowNs: 0)!
        long.progress(first, bytes: 75, nowNs: 10)
        let waits = long.isReadable(offset: 0, length: 90, headerBytes: 10, readThrough: 10)
        #expect(!waits && long.startRanges == [0..<90])
        #expect(long.nextForReader(nowNs: 100) == nil, "15 bytes to go on a moving transfer")
        #expect(long.nextForReader(nowNs: 310)?.rangeHeader == "bytes=75-94")
        #expect(long.nextForReader(nowNs: 320) == nil)
        #expect(long.next(nowNs: 320)?.rangeHeader == "bytes=95-99", "the rest of its chunk, split off, in file order")
    }

    /// One simulated download: workers and a reader's connection take transfers from the plan, each
    /// brings a random number of bytes at a time, some fail, the clock moves, a player asks whether
    /// it can start anywhere and where it reads; the file is a byte map. Every byte the plan calls
    /// written is written, no transfer reaches past the file, and every file completes.
    private func simulateDownload(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let total = Int64.random(in: 1...3_000, using: &random)
        let configuration = RangeFetchPlan.Configuration(
            chunkBytes: Int64.random(in: 16...400, using: &random),
            speculativeChunks: Int.random(in: 1...6, using: &random),
            maxFailuresPerChunk: 1_000, minimumHedgeBytes: Int64.random(in: 1...40, using: &random),
            minimumSplitBytes: Int64.random(in: 1...80, using: &random),
            startPieceBytes: Int64.random(in: 1...120, using: &random),
            startStallNs: Int64.random(in: 0...50, using: &random))
        var plan = RangeFetchPlan(configuration: configuration)
        var written = [Bool](repeating: false, count: Int(total))
        struct Transfer {
            var request: RangeFetchPlan.Request
            var bytes: Int64 = 0
        }
        // Five workers and the reader's connection (the last): each idle or on one transfer.
        var connections = [Transfer?](repeating: nil, count: 6)
        var now: Int64 = 0
        var steps = 0
        while !plan.isComplete && steps < 100_000 {
            steps += 1
            // (Plain checks in the loop: an #expect each step takes a while in a debug build.)
            if let failure = plan.failure {
                Issue.record("seed \(seed): \(failure)")
                return
            }
            now += Int64.random(in: 0...10, using: &random)
            let slot = Int.random(in: 0..<connections.count, using: &random)
            guard var transfer = connections[slot] else {
                let request = slot == connections.count - 1 ? plan.nextForReader(nowNs: now) : plan.next(nowNs: now)
                if let request {
                    if request.start > request.end || request.start < 0 {
                        Issue.record("seed \(seed): \(request)")
                        return
                    }
                    connections[slot] = Transfer(request: request)
                }
                continue
            }
            switch Int.random(in: 0..<20, using: &random) {
            case 0:  // A stalled connection: it ends with nothing more.
                plan.ended(transfer.request, ok: !plan.isWanted(transfer.request))
                connections[slot] = nil
            case 1:  // A player asks whether it can start somewhere, and reads on from there.
                let offset = Int64.random(in: 0..<total, using: &random)
                _ = plan.isReadable(
                    offset: offset, length: Int64.random(in: 1...200, using: &random),
                    headerBytes: Int64.random(in: 0...100, using: &random),
                    readThrough: Int64.random(in: 0...100, using: &random),
                    tailBytes: Int64.random(in: 0...50, using: &random),
                    leadBytes: Int64.random(in: 0...50, using: &random))
                if Bool.random(using: &random) { plan.readerStalled() }
            default:
                let first = transfer.request.start + transfer.bytes
                // A range past the end is refused (416); the first answer tells the size.
                if transfer.request.start >= total {
                    plan.beyondEnd(transfer.request)
                    connections[slot] = nil
                    continue
                }
                if plan.totalBytes == nil { plan.learned(totalBytes: total) }
                let count = plan.writableBytes(
                    transfer.request, offset: transfer.bytes, count: Int64.random(in: 1...64, using: &random))
                if first + count > total {
                    Issue.record("seed \(seed): written past the end")
                    return
                }
                for offset in first..<min(total, first + count) { written[Int(offset)] = true }
                transfer.bytes += count
                plan.progress(transfer.request, bytes: transfer.bytes, nowNs: now)
                if count == 0 || !plan.isWanted(transfer.request) || transfer.bytes >= transfer.request.length {
                    plan.ended(
                        transfer.request,
                        ok: transfer.bytes >= transfer.request.length || !plan.isWanted(transfer.request))
                    connections[slot] = nil
                } else {
                    connections[slot] = transfer
                }
            }
            let from = Int64.random(in: 0..<total, using: &random)
            let run = plan.contiguousBytes(from: from)
            // Its first, last and one byte between.
            let probe = run > 0 ? [from, from + run - 1, Int64.random(in: from..<from + run, using: &random)] : []
            if !probe.allSatisfy({ written[Int($0)] }) {
                Issue.record("seed \(seed): \(run) bytes from \(from) called written, not all are")
                return
            }
        }
        #expect(plan.isComplete, "seed \(seed): not complete (\(plan.coveredBytes) of \(total))")
        #expect(written.allSatisfy { $0 } && plan.contiguousBytes(from: 0) == total, "seed \(seed)")
    }

    @Test(
        "Random downloads with starts, stalls, hedges and failures: every byte called written is, each file completes")
    func randomDownloads() {
        for seed in UInt64(1)...2_000 { simulateDownload(seed: seed) }
    }

    @Test("A failed transfer is asked again from where its chunk stopped; too many failures end the download")
    func retryAndResume() {
        var plan = RangeFetchPlan(configuration: small)
        plan.learned(totalBytes: 100)
        let first = plan.next()!
        plan.progress(first, bytes: 40)
        plan.ended(first, ok: false)
        let resumed = plan.next()!
        #expect(resumed.rangeHeader == "bytes=40-99")
        plan.ended(resumed, ok: false)
        let again = plan.next()!
        #expect(again.start == 40)
        plan.ended(again, ok: false)
        #expect(plan.failure != nil && plan.next() == nil)
    }

    @Test("A size that changes, an empty file and a refused first range are failures")
    func failures() {
        var changed = RangeFetchPlan(configuration: small)
        changed.learned(totalBytes: 500)
        changed.learned(totalBytes: 501)
        #expect(changed.failure != nil)
        var empty = RangeFetchPlan(configuration: small)
        empty.learned(totalBytes: 0)
        #expect(empty.failure != nil)
        var refused = RangeFetchPlan(configuration: small)
        let first = refused.next()!
        let second = refused.next()!
        refused.beyondEnd(second)
        #expect(refused.failure == nil, "a speculative chunk past the end of a short file, before its size is known")
        refused.beyondEnd(first)
        #expect(refused.failure != nil, "the first byte refused")
    }

    @Test("Eviction keeps the newest files and every file still wanted")
    func eviction() {
        let files: [(name: String, modifiedNs: Int64)] = [("a", 1), ("b", 5), ("c", 3), ("d", 4), ("e", 2)]
        #expect(Set(MediaCachePlan.victims(files, keep: 3, kept: [])) == ["a", "e"])
        #expect(Set(MediaCachePlan.victims(files, keep: 3, kept: ["a"])) == ["e", "c"])
        #expect(MediaCachePlan.victims(files, keep: 10, kept: []).isEmpty)
        #expect(MediaCachePlan.fileName(for: "http://x/media/1") == MediaCachePlan.fileName(for: "http://x/media/1"))
        #expect(MediaCachePlan.fileName(for: "http://x/media/1") != MediaCachePlan.fileName(for: "http://x/media/2"))
        #expect(MediaCachePlan.fileName(for: "http://x/media/1").hasSuffix(".media"))
    }

    @Test("The URL of the next library track comes from the current one's; catalog tracks have none")
    func nextSource() {
        let current = Track(
            id: "local:0011aabb", title: "t", artist: "a", album: "", durationMs: 1000,
            source: "http://10.0.0.1:8000/media/0011aabb")
        #expect(
            MediaCachePlan.source(ofLocalTrack: "local:ffee", after: current) == "http://10.0.0.1:8000/media/ffee")
        #expect(MediaCachePlan.source(ofLocalTrack: "1440857781", after: current) == nil, "a catalog track")
        #expect(MediaCachePlan.source(ofLocalTrack: "local:../etc", after: current) == nil)
        #expect(MediaCachePlan.source(ofLocalTrack: "local:", after: current) == nil)
        var catalog = current
        catalog.id = "1440857781"
        catalog.source = "https://audio-ssl.itunes.apple.com/preview.m4a"
        #expect(MediaCachePlan.source(ofLocalTrack: "local:ffee", after: catalog) == nil)
        var otherShape = current
        otherShape.source = "http://10.0.0.1:8000/files/0011aabb"
        #expect(MediaCachePlan.source(ofLocalTrack: "local:ffee", after: otherShape) == nil)
    }

    @Test("What a listener fetches ahead: the next two that play, catalog tracks by the DJ's next sources")
    func prefetchPlan() {
        func track(_ id: String, _ source: String) -> Track {
            Track(id: id, title: "t", artist: "a", album: "", durationMs: 1000, source: source)
        }
        func entry(_ id: String, awaiting: Bool = false) -> QueueList.Entry {
            QueueList.Entry(
                queueID: 0, trackID: id, title: "", artist: "", requester: "", tally: Tally(),
                awaitingApproval: awaiting)
        }
        let local = track("local:aa", "http://10.0.0.1:8000/media/aa")
        let catalog = track("111", "https://audio-ssl.itunes.apple.com/p111.m4a")
        let list = QueueList(
            mode: .approve, total: 2,
            entries: [entry("999", awaiting: true), entry("222"), entry("local:bb"), entry("local:cc")])
        let sources = NextSources(entries: [
            .init(trackID: "222", source: "https://audio-ssl.itunes.apple.com/p222.m4a"),
            .init(trackID: "local:bb", source: "http://10.0.0.1:8000/media/bb"),
        ])
        // Without the DJ's sources a catalog track has no URL: only library tracks after a library track.
        #expect(
            MediaCachePlan.prefetch(current: local, upNext: list, sources: nil)
                == ["http://10.0.0.1:8000/media/bb", "http://10.0.0.1:8000/media/cc"])
        #expect(MediaCachePlan.prefetch(current: catalog, upNext: list, sources: nil).isEmpty)
        // With them: the catalog track first, as it plays first; a request awaiting approval never.
        #expect(
            MediaCachePlan.prefetch(current: catalog, upNext: list, sources: sources)
                == ["https://audio-ssl.itunes.apple.com/p222.m4a", "http://10.0.0.1:8000/media/bb"])
        #expect(
            MediaCachePlan.prefetch(current: local, upNext: list, sources: sources)
                == ["https://audio-ssl.itunes.apple.com/p222.m4a", "http://10.0.0.1:8000/media/bb"])
        // Before the queue list came, the sources' own order; the playing track is never fetched ahead.
        #expect(
            MediaCachePlan.prefetch(current: track("222", "x"), upNext: nil, sources: sources)
                == ["http://10.0.0.1:8000/media/bb"])
        #expect(MediaCachePlan.prefetch(current: nil, upNext: nil, sources: nil).isEmpty)
    }
}
