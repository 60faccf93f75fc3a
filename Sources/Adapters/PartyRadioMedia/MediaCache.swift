import Foundation
import PartyRadioCore
import PartyRadioCurl
import Synchronization

/// A listener's media cache: each track is fetched as several byte ranges on separate connections
/// (``RangeFetchPlan``: retries, resumes, a second request for a slow chunk's rest) into a file in
/// `directory`, which the player then plays from disk, so a lossy link cannot starve it; the player
/// may read a file while it is still being fetched (``reader(named:)``).
///
/// One download at a time (the DJ's server allows 8 connections per address; ``workers`` of them
/// fetch, one more fetches what a player reading the file while it downloads needs next, the rest
/// are left for a player that streams); the track the station plays goes before
/// the ones that play next. Downloads run on the cache's own thread (made with the cache) and its
/// workers; the node's thread only asks ``status(of:)`` and ``request(_:now:)``, which take the
/// lock for a moment and never create a thread: a listener asks for the station's track while
/// libmpv is being loaded, and glibc's `dlopen` holds the lock every new thread's TLS needs.
/// At most ``keep`` finished files stay; the oldest go first, never one asked for since.
public final class MediaCache: Sendable {
    public enum Status: Equatable, Sendable {
        case absent
        case fetching
        case ready(path: String)
        case failed(String)
    }

    public let directory: URL
    public let keep: Int
    public let workers: Int
    /// Sent with every request (a private station's proof of its join code, say).
    public let headers: [(String, String)]
    let planConfiguration: RangeFetchPlan.Configuration

    private struct State {
        var status: [String: Status] = [:]
        var queue: [String] = []
        var active: String?
        /// The active download's workers, so that the station's track can stop a prefetch.
        var activeJob: RangeJob?
        /// Whether the active download is the station's track (nothing stops it).
        var activeIsNow = false
        /// URLs in the order last asked for (newest last): what eviction keeps.
        var recent: [String] = []
    }
    private let state = Mutex(State())
    /// Downloads for the cache's thread to start, in order, and what wakes it; `nil` ends it.
    private let starts = Starts()

    public init(
        directory: URL, keep: Int = 4, workers: Int = 6, headers: [(String, String)] = [],
        planConfiguration: RangeFetchPlan.Configuration = RangeFetchPlan.Configuration()
    ) throws {
        self.directory = directory
        self.headers = headers
        self.keep = max(2, keep)
        self.workers = max(1, workers)
        var configuration = planConfiguration
        configuration.speculativeChunks = max(configuration.speculativeChunks, workers)
        self.planConfiguration = configuration
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Unfinished downloads of an earlier run are of no use.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        where name.hasSuffix(".part") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        CurlHandle.load()  // libcurl is loaded here, not by the first download
        let thread = Thread { [weak self, starts] in
            nameCurrentThread("partyradio-fetch")
            while let url = starts.next() {
                guard let self else { return }
                self.run(url)
            }
        }
        thread.name = "partyradio-fetch"
        thread.start()
    }

    deinit { starts.end() }

    /// Whether `url` is something this cache fetches (http or https).
    public static func handles(_ url: String) -> Bool { LoadPlan.isCached(url) }

    /// Where `url`'s file is, whether it is being fetched, or why it could not be.
    public func status(of url: String) -> Status {
        state.withLock { state in
            if let status = state.status[url] { return status }
            let path = finalPath(for: url)
            if FileManager.default.fileExists(atPath: path) {  // from an earlier run
                state.status[url] = .ready(path: path)
                return .ready(path: path)
            }
            return .absent
        }
    }

    /// The name under which ``reader(named:)`` opens `url`'s file (the cache file's name).
    public static func streamName(for url: String) -> String { MediaCachePlan.fileName(for: url) }

    /// Whether `url` is being fetched and far enough along to be played while the rest arrives: its
    /// size is known, its first `headerBytes` are there (what a player reads before anything else),
    /// and the part from `fraction` of the file on, `span` of it long (fractions: a position in the
    /// track and a few seconds of it over its duration, as a station's formats lay their bytes out
    /// in time). A player reads through a gap up to `readThrough` long rather than seek across it,
    /// so a part that near the start needs every byte before it too. The download is told that a
    /// reader needs that part next (``RangeFetchPlan/need(offset:)``), so it is fetched first.
    /// `lead`: how far (a fraction of the file again) before `fraction` the player may read from:
    /// those bytes are waited for too, and the read-through is counted from there. `tailBytes`: how much of the file's end a
    /// player reads when it opens it (``RangeFetchPlan/isReadable(offset:length:headerBytes:readThrough:tailBytes:leadBytes:)``).
    public func isReadable(
        _ url: String, at fraction: Double = 0, span: Double = 0, headerBytes: Int64 = 4 << 10,
        readThrough: Int64 = 0, lead: Double = 0, tailBytes: Int64 = 0
    ) -> Bool {
        let job: RangeJob? = state.withLock { state in
            guard state.active == url, let job = state.activeJob, !job.isCancelled else { return nil }
            return job
        }
        guard let job else { return false }
        return job.plan.withLock { plan in
            guard let total = plan.totalBytes else { return false }
            let offset = Int64((min(1, max(0, fraction.isFinite ? fraction : 0)) * Double(total)).rounded(.down))
            let length = Int64((min(1, max(0, span.isFinite ? span : 0)) * Double(total)).rounded(.up))
            let leadBytes = Int64((min(1, max(0, lead.isFinite ? lead : 0)) * Double(total)).rounded(.up))
            return plan.isReadable(
                offset: offset, length: length, headerBytes: headerBytes, readThrough: readThrough + leadBytes,
                tailBytes: tailBytes, leadBytes: leadBytes)
        }
    }

    /// A reader of the file named `name` (``streamName(for:)``): the finished file, or the one being
    /// fetched, read as its bytes arrive (a read waits for them). Nil when the cache has neither, or
    /// the download's size is not known yet.
    public func reader(named name: String) -> Reader? {
        state.withLock { state in
            guard let url = state.status.keys.first(where: { MediaCachePlan.fileName(for: $0) == name }) else {
                return nil
            }
            let path = finalPath(for: url)
            if case .ready = state.status[url] {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                var info = stat()
                guard descriptor >= 0 else { return nil }
                guard fstat(descriptor, &info) == 0, info.st_size > 0 else {
                    close(descriptor)
                    return nil
                }
                return Reader(size: Int64(info.st_size), descriptor: descriptor, job: nil)
            }
            // The job's file exists while it is the active one (it is renamed or deleted only before
            // `activeJob` is cleared, under this lock); the descriptor stays valid after either.
            guard state.active == url, let job = state.activeJob, !job.isCancelled,
                let total = job.plan.withLock({ $0.totalBytes })
            else { return nil }
            var descriptor = open(path + ".part", O_RDONLY | O_CLOEXEC)
            if descriptor < 0 && job.isFinished && job.plan.withLock(\.isComplete) {
                descriptor = open(path, O_RDONLY | O_CLOEXEC)  // renamed a moment ago
            }
            guard descriptor >= 0 else { return nil }
            return Reader(size: total, descriptor: descriptor, job: job)
        }
    }

    /// Fetches `url` unless it is here or on its way; `now`: before every download waiting (the
    /// station plays it), otherwise after them (it plays next). A failed download is tried again.
    public func request(_ url: String, now: Bool) {
        guard Self.handles(url) else { return }
        let start: String? = state.withLock { state in
            state.recent.removeAll { $0 == url }
            state.recent.append(url)
            switch state.status[url] {
            case .ready(let path):
                touch(path)
                return nil
            case .fetching:
                if now && state.active == url { state.activeIsNow = true }
                guard now, let index = state.queue.firstIndex(of: url) else { return nil }
                state.queue.remove(at: index)
                state.queue.insert(url, at: 0)
                if let active = state.active, !state.activeIsNow, let job = state.activeJob {
                    job.cancel()
                    state.queue.insert(active, at: 1)
                }
                return nil
            case .absent, .failed, nil:
                let path = finalPath(for: url)
                if FileManager.default.fileExists(atPath: path) {
                    touch(path)
                    state.status[url] = .ready(path: path)
                    return nil
                }
                state.status[url] = .fetching
                if now { state.queue.insert(url, at: 0) } else { state.queue.append(url) }
                // The station's track does not wait for a prefetch: that one stops and queues again.
                if now, let active = state.active, !state.activeIsNow, let job = state.activeJob {
                    job.cancel()
                    state.queue.insert(active, at: 1)
                }
                return startNext(&state, now: now)
            }
        }
        if let start { launch(start) }
    }

    /// Takes the next download off the queue when none runs; `now`: it is the station's track.
    private func startNext(_ state: inout State, now: Bool = false) -> String? {
        guard state.active == nil, !state.queue.isEmpty else { return nil }
        let url = state.queue.removeFirst()
        state.active = url
        state.activeIsNow = now && state.recent.last == url
        state.activeJob = nil
        return url
    }

    /// Hands a download to the cache's thread.
    private func launch(_ url: String) { starts.push(url) }

    /// One download, on the cache's thread, and the next one's start.
    private func run(_ url: String) {
        let result = download(url)
        let next: String? = state.withLock { state in
            // A stopped prefetch is queued again (it is already back in the queue).
            state.status[url] = result ?? .fetching
            state.active = nil
            state.activeJob = nil
            return startNext(&state, now: state.queue.first == state.recent.last)
        }
        if case .failed(let reason)? = result {
            Log.debug(.player, "media cache: \(url) failed: \(reason)")
        }
        evict()
        if let next { launch(next) }
    }

    /// The whole download: `workers` threads, each taking transfers from the plan; the file is
    /// renamed into place once every byte is there. Nil when it was stopped for the station's track.
    private func download(_ url: String) -> Status? {
        if let failure = CurlHandle.load() { return .failed(failure.detail) }
        let path = finalPath(for: url)
        let partial = path + ".part"
        let descriptor = open(partial, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return .failed("cannot write \(partial): errno \(errno)") }
        let job = RangeJob(
            url: url, headers: headers, descriptor: descriptor, plan: RangeFetchPlan(configuration: planConfiguration))
        let stopped = state.withLock { state in
            guard state.active == url, !state.queue.contains(url) else { return true }
            state.activeJob = job
            return false
        }
        if stopped {
            close(descriptor)
            unlink(partial)
            return nil
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let group = DispatchGroup()
        // One more connection than the workers, kept for a reader (the player reading the file while
        // it downloads): it fetches from where the player reads (RangeFetchPlan.nextForReader).
        let readerIndex = workers
        for index in 0...readerIndex {
            group.enter()
            let worker = Thread {
                nameCurrentThread("partyradio-fetch-\(index)")
                job.work(forReader: index == readerIndex)
                group.leave()
            }
            worker.name = "partyradio-fetch-\(index)"
            worker.start()
        }
        group.wait()
        close(descriptor)
        job.finish()  // readers waiting for bytes that will not come stop waiting
        let (complete, failure, total) = job.plan.withLock { ($0.isComplete, $0.failure, $0.totalBytes) }
        if job.isCancelled && !complete {
            unlink(partial)
            return nil
        }
        guard complete else {
            unlink(partial)
            return .failed(failure ?? "the download stopped")
        }
        guard rename(partial, path) == 0 else {
            unlink(partial)
            return .failed("cannot rename \(partial): errno \(errno)")
        }
        let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        let counts = job.counts.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        Log.debug(.player, "media cache: \(total ?? 0) bytes of \(url) in \(ms) ms (\(counts.joined(separator: ", ")))")
        return .ready(path: path)
    }

    private func evict() {
        let kept: Set<String> = state.withLock { state in
            state.recent = Array(state.recent.suffix(keep))
            var names = Set(state.recent.map { MediaCachePlan.fileName(for: $0) })
            if let active = state.active { names.insert(MediaCachePlan.fileName(for: active)) }
            for url in state.queue { names.insert(MediaCachePlan.fileName(for: url)) }
            return names
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".media") }
        let files = names.map { name -> (name: String, modifiedNs: Int64) in
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(name).path)
            let date = attributes?[.modificationDate] as? Date ?? .distantPast
            return (name, Int64(date.timeIntervalSince1970 * 1e9))
        }
        let victims = MediaCachePlan.victims(files, keep: keep, kept: kept)
        guard !victims.isEmpty else { return }
        state.withLock { state in
            for (url, status) in state.status where victims.contains(MediaCachePlan.fileName(for: url)) {
                if case .ready = status { state.status[url] = nil }
            }
        }
        for name in victims { unlink(directory.appendingPathComponent(name).path) }
    }

    private func finalPath(for url: String) -> String {
        directory.appendingPathComponent(MediaCachePlan.fileName(for: url)).path
    }

    private func touch(_ path: String) { utimes(path, nil) }
}

/// One download's shared part: the plan under a lock, the file the workers write into.
final class RangeJob: Sendable {
    let url: String
    let headers: [(String, String)]
    let descriptor: Int32
    let plan: Mutex<RangeFetchPlan>
    /// For the debug log: transfers, new connections, failures (by curl code or status), superseded.
    let counts = Mutex<[String: Int]>([:])
    private let cancelled = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Signalled when bytes arrive and when the download ends: what a ``MediaCache/Reader`` waits on.
    let progressed = ProgressSignal()
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    /// Whether every worker has ended (the download is complete, failed or stopped).
    var isFinished: Bool { finished.load(ordering: .acquiring) }
    /// Stops the workers (within a progress callback, about a second at worst).
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        progressed.notify()
    }

    /// The workers have ended.
    func finish() {
        finished.store(true, ordering: .releasing)
        progressed.notify()
    }

    init(url: String, headers: [(String, String)], descriptor: Int32, plan: RangeFetchPlan) {
        self.url = url
        self.headers = headers
        self.descriptor = descriptor
        self.plan = Mutex(plan)
    }

    /// One worker: takes transfers until the plan is complete or failed; one easy handle, so its
    /// connection is kept alive from one range to the next. `forReader`: only what a reader needs.
    func work(forReader: Bool = false) {
        guard let easy = try? CurlHandle() else { return }
        // The reader's connection is made before the reader needs it: on a lossy link a new
        // connection costs a second or more (a lost SYN), which a player waiting to start would pay.
        if forReader { _ = perform(RangeTransfer(job: self, request: Self.warmUp, isWarmUp: true), easy: easy) }
        var pause = false
        while true {
            enum Step {
                case stop, wait
                case fetch(RangeFetchPlan.Request)
            }
            let step: Step = plan.withLock { plan in
                if plan.failure != nil || plan.isComplete || isCancelled { return .stop }
                let now = Self.nowNs
                return (forReader ? plan.nextForReader(nowNs: now) : plan.next(nowNs: now)).map(Step.fetch) ?? .wait
            }
            switch step {
            case .stop: return
            case .wait:
                usleep(5_000)
            case .fetch(let request):
                if pause { usleep(50_000) }  // after a failure: no hot loop against a refusing server
                pause = !transfer(request, easy: easy, forReader: forReader)
            }
        }
    }

    /// The plan's clock (``RangeFetchPlan/next(nowNs:)``): monotonic nanoseconds.
    static var nowNs: Int64 { Int64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds) }

    /// A first byte asked for only to open a connection; what it brings is not written.
    static let warmUp = RangeFetchPlan.Request(chunk: 0, start: 0, end: 0)

    /// One ranged GET; true when it ended well (or its chunk got done by another).
    private func transfer(
        _ request: RangeFetchPlan.Request, easy: CurlHandle, forReader: Bool = false
    ) -> Bool {
        let context = RangeTransfer(job: self, request: request)
        let began = DispatchTime.now().uptimeNanoseconds
        let failure = perform(context, easy: easy)
        if Log.isEnabled {
            let ms = (DispatchTime.now().uptimeNanoseconds - began) / 1_000_000
            Log.debug(
                .media,
                "transfer\(forReader ? " (reader)" : "") chunk \(request.chunk) \(request.start)-\(request.end): "
                    + "\(context.written) bytes in \(ms) ms, curl \(failure?.code ?? 0), status \(context.status)")
        }
        return plan.withLock { plan in
            if context.status == 416 {
                plan.beyondEnd(request)
                return true
            }
            if context.status == 200 { plan.fail("the server does not answer byte ranges") }
            let ok = failure == nil && context.status == 206 && context.written >= request.length
            plan.ended(request, ok: ok || !plan.isWanted(request))
            return ok || !plan.isWanted(request)
        }
    }

    /// Runs `context`'s GET on `easy` and counts it for the log; libcurl's failure, if any.
    private func perform(_ context: RangeTransfer, easy: CurlHandle) -> CurlFailure? {
        let outcome = easy.perform(
            CurlRequest(
                url: url, headers: [("Range", context.request.rangeHeader)] + headers, timeout: 60,
                // A lost SYN costs a 1 s retransmission; a fresh connection after 1.5 s races the kernel's next one.
                connectTimeout: 1.5,
                // A connection stuck in retransmission back-off is dropped and the chunk asked again.
                lowSpeed: (bytesPerSecond: 2048, seconds: 2)),
            into: context)
        counts.withLock { counts in
            counts["transfers", default: 0] += 1
            counts["connects", default: 0] += outcome.connectionsOpened
            if let failure = outcome.failure { counts["curl\(failure.code)", default: 0] += 1 }
            if context.status != 206 { counts["status\(context.status)", default: 0] += 1 }
            if context.isWarmUp { counts["warm-up", default: 0] += 1 }
        }
        return outcome.failure
    }
}

/// What the callbacks of one transfer fill; only its worker thread touches it.
final class RangeTransfer: CurlReceiver {
    let job: RangeJob
    let request: RangeFetchPlan.Request
    /// Only opens the connection (``RangeJob/warmUp``): the plan is not told of it.
    let isWarmUp: Bool
    var status = 0
    var written: Int64 = 0

    init(job: RangeJob, request: RangeFetchPlan.Request, isWarmUp: Bool = false) {
        self.job = job
        self.request = request
        self.isWarmUp = isWarmUp
    }

    func received(status: Int) { self.status = status }

    func received(field name: String, value: String) {
        guard name == "content-range", status == 206 || status == 416 else { return }
        if let slash = value.lastIndex(of: "/"), let total = Int64(value[value.index(after: slash)...]) {
            job.plan.withLock { $0.learned(totalBytes: total) }
        }
    }

    func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard status == 206 else { return false }  // a whole file (200) or an error page: stop
        if isWarmUp { return true }
        let writable = job.plan.withLock { $0.writableBytes(request, offset: written, count: Int64(bytes.count)) }
        var done: Int64 = 0
        while done < writable {
            let result = pwrite(
                job.descriptor, bytes.baseAddress! + Int(done), Int(writable - done),
                off_t(request.start + written + done))
            guard result > 0 else {
                job.plan.withLock { $0.fail("cannot write the cache file: errno \(errno)") }
                return false
            }
            done += Int64(result)
        }
        written += writable
        let wanted = job.plan.withLock { plan in
            plan.progress(request, bytes: written, nowNs: RangeJob.nowNs)
            return plan.isWanted(request)
        }
        job.progressed.notify()
        // Once the chunk is complete (by this transfer or another), the rest is not needed.
        return wanted || written >= request.length
    }

    func shouldContinue() -> Bool {
        guard !job.isCancelled else { return false }
        if isWarmUp { return true }
        return job.plan.withLock { $0.isWanted(request) } || written >= request.length
    }
}

/// The downloads handed to a cache's thread: a queue and a semaphore that counts its entries.
private final class Starts: Sendable {
    private let queue = Mutex<(urls: [String], ended: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)

    func push(_ url: String) {
        queue.withLock { $0.urls.append(url) }
        ready.signal()
    }

    func end() {
        queue.withLock { $0.ended = true }
        ready.signal()
    }

    /// Waits for the next download; nil once ended.
    func next() -> String? {
        ready.wait()
        return queue.withLock { queue in queue.ended ? nil : queue.urls.removeFirst() }
    }
}
