import Dispatch
import Foundation
import PartyRadioCore
import Synchronization

extension MediaCache {
    /// One reader of a cached track's file, the whole file or one still being fetched: a read
    /// returns the bytes that are there, or waits until the first of them arrives (the plan fetches
    /// in file order, from where the reader reads). Any thread may read (one at a time) and any
    /// other may ``cancel()``. The descriptor is the file's own, opened when the reader was made:
    /// it stays valid when the download renames the file into place, and a failed download, which
    /// deletes it, makes waiting reads fail instead of returning what was never written.
    public final class Reader: Sendable {
        /// The file's size in bytes (from the server's `Content-Range` while it downloads).
        public let size: Int64
        private let descriptor: Int32
        /// The download, while the file is not complete (nil: a finished file).
        private let job: RangeJob?
        private let cancelled = Atomic<Bool>(false)
        /// A read gives up when no byte has arrived for this long (the download retries by itself
        /// for longer; the player then streams the track's URL instead).
        static let stallTimeout = DispatchTimeInterval.seconds(12)
        /// How long a read waits for its next byte before the plan asks for it again on another
        /// connection (``RangeFetchPlan/readerStalled()``), each time: longer than a segment takes on
        /// a clean LAN, about the kernel's first retransmission timeout (200 ms) and its doublings.
        /// Under 25 % loss a read was seen waiting 1.3 s on one transfer in such a back-off while the
        /// player had 1 s of audio read ahead.
        static let stallHedgesNs: [UInt64] = [250_000_000, 700_000_000, 1_500_000_000]

        init(size: Int64, descriptor: Int32, job: RangeJob?) {
            self.size = size
            self.descriptor = descriptor
            self.job = job
        }

        deinit { close(descriptor) }

        /// Copies bytes from `offset` into `buffer`: as many as are there now (at most its count),
        /// waiting for the first when none is.
        public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> ByteSourceRead {
            guard offset >= 0 else { return .failed("a negative offset") }
            guard offset < size else { return .end }
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return .bytes(0) }
            let wanted = min(Int64(buffer.count), size - offset)
            let available = job.map { wait(for: $0, at: offset) } ?? .bytes(Int(wanted))
            guard case .bytes(let count) = available else { return available }
            while true {
                let result = pread(descriptor, base, Int(min(wanted, Int64(count))), off_t(offset))
                if result > 0 { return .bytes(result) }
                if result == 0 { return .failed("the file ended early") }
                if errno != EINTR { return .failed("cannot read the cache file: errno \(errno)") }
            }
        }

        /// Stops waiting reads, and fails every later one.
        public func cancel() {
            cancelled.store(true, ordering: .releasing)
            job?.progressed.notify()
        }

        public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

        /// The bytes there from the file's start, without a gap.
        var availableFromStart: Int64 { job?.plan.withLock { $0.contiguousBytes(from: 0) } ?? size }

        /// Waits until the byte at `offset` is written: how many from there are, or why they will not be.
        private func wait(for job: RangeJob, at offset: Int64) -> ByteSourceRead {
            job.plan.withLock { $0.need(offset: offset) }
            var deadline = DispatchTime.now() + Self.stallTimeout
            var lastCovered: Int64 = -1
            let began = DispatchTime.now().uptimeNanoseconds
            var waitedOn: String?
            var stalls = 0
            while true {
                let seen = job.progressed.generation
                if isCancelled { return .cancelled }
                let (available, failure, covered) = job.plan.withLock {
                    ($0.contiguousBytes(from: offset), $0.failure, $0.coveredBytes)
                }
                if available > 0 {
                    if let waitedOn {
                        let ms = (DispatchTime.now().uptimeNanoseconds - began) / 1_000_000
                        Log.debug(.media, "reader waited \(ms) ms at \(offset) (\(waitedOn))")
                    }
                    return .bytes(Int(min(available, Int64(Int32.max))))
                }
                if waitedOn == nil, Log.isEnabled {
                    waitedOn = job.plan.withLock { $0.describe(offset: offset) }
                }
                // Waited long for the next byte: the same bytes again on the next free connection.
                let waited = DispatchTime.now().uptimeNanoseconds - began
                if stalls < Self.stallHedgesNs.count, waited >= Self.stallHedgesNs[stalls] {
                    stalls += 1
                    job.plan.withLock { $0.readerStalled() }
                    Log.debug(.media, "reader stalled \(waited / 1_000_000) ms at \(offset): asking again")
                }
                if let failure { return .failed(failure) }
                if job.isCancelled || job.isFinished { return .failed("the download stopped") }
                if covered != lastCovered {
                    lastCovered = covered
                    deadline = DispatchTime.now() + Self.stallTimeout
                } else if DispatchTime.now() >= deadline {
                    return .failed("no bytes arrived for \(Self.stallTimeout)")
                }
                job.progressed.wait(after: seen, timeout: .milliseconds(100))
            }
        }
    }
}

/// Wakes whoever waits for a download's bytes: each ``notify()`` starts a new generation, and a
/// waiter that saw an older one returns at once, so no signal between a check and a wait is lost.
final class ProgressSignal: Sendable {
    private let state = Mutex<(generation: UInt64, waiters: [DispatchSemaphore])>((0, []))

    var generation: UInt64 { state.withLock { $0.generation } }

    func notify() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Returns once a generation after `seen` has begun, or after `timeout`.
    func wait(after seen: UInt64, timeout: DispatchTimeInterval) {
        let semaphore = DispatchSemaphore(value: 0)
        let waiting = state.withLock { state in
            guard state.generation == seen else { return false }
            state.waiters.append(semaphore)
            return true
        }
        guard waiting else { return }
        _ = semaphore.wait(timeout: .now() + timeout)
        state.withLock { state in state.waiters.removeAll { $0 === semaphore } }
    }
}
