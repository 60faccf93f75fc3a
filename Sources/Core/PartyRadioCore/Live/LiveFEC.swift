/// Live frames as the data shards of an FEC block, and back (docs/LIVE.md, "Shards").
///
/// A block is k consecutive frames; its data shards are each frame's audio fields (time, delay,
/// codec, duration, packet length, packet) zero-padded to the longest of them; the m repairs are the
/// parity of those shards. With any k of the k + m, every frame of the block comes back whole.
public enum LiveFEC {
    /// A shard's bytes besides the packet: time (8), delay (2), codec (1), duration (1), packet
    /// length (2).
    public static let shardOverhead = 14

    /// The data shard of `frame`, zero-padded to `length`; nil if the frame does not fit.
    public static func shard(of frame: LiveFrame, length: Int) -> [UInt8]? {
        guard shardOverhead + frame.payload.count <= length else { return nil }
        var writer = ByteWriter(capacity: length)
        frame.writeAudio(into: &writer)
        writer.write(bytes: repeatElement(0, count: length - writer.bytes.count))
        return writer.bytes
    }

    /// The frame numbered `sequence` from its data shard; nil if the shard does not parse or its
    /// padding is not zeros (a block decoded from shards that do not belong together).
    public static func frame(fromShard shard: [UInt8], sequence: UInt64) -> LiveFrame? {
        var reader = ByteReader(shard)
        guard let frame = try? LiveFrame.readAudio(sequence: sequence, from: &reader) else { return nil }
        guard shard[reader.offset...].allSatisfy({ $0 == 0 }) else { return nil }
        return frame
    }

    /// The repairs of a block: `frames` are consecutive (numbers rising by one), 1–16 of them;
    /// `parityCount` 1–8. What the DJ sends after the block's last frame.
    public static func repairs(for frames: [LiveFrame], parityCount: Int, code: some ErasureCode) -> [LiveRepair] {
        precondition(LiveRepair.dataCountRange.contains(frames.count), "a block of \(frames.count) frames")
        precondition(LiveRepair.parityCountRange.contains(parityCount), "\(parityCount) parity shards")
        let first = frames[0].sequence
        precondition(
            frames.indices.allSatisfy { frames[$0].sequence == first &+ UInt64($0) }, "a block of frames in a row")
        let length = shardOverhead + frames.map(\.payload.count).max()!
        let data = frames.map { shard(of: $0, length: length)! }
        return code.parity(of: data, parityCount: parityCount).enumerated().map { index, parity in
            LiveRepair(
                firstSequence: first, dataCount: frames.count, parityCount: parityCount, parityIndex: index,
                shard: parity)
        }
    }

    /// How many frames a block holds so that its first frame can still be rebuilt in time:
    /// `k · f + margin ≤ delay`, with 20 ms for encoding, the network and jitter; 1–16.
    public static func dataCount(delayNs: Int64, frame: LiveFrameDuration, marginNs: Int64 = 20_000_000) -> Int {
        let fitting = (delayNs - marginNs) / frame.ns
        return Int(min(max(fitting, 1), Int64(LiveRepair.dataCountRange.upperBound)))
    }
}
