/// A systematic erasure code over equal-length shards: k data shards and m parity shards, any k
/// of which give the data back (docs/LIVE.md, "The FEC"). The core speaks to it through this
/// protocol so that it stays free of C; the live adapter's `ISALErasureCode` is Reed–Solomon by
/// Intel's ISA-L, and every implementation must make the same parity (the repairs travel between
/// machines).
public protocol ErasureCode: Sendable {
    /// The `parityCount` parity shards of `data` (k shards of one length), each of that length.
    func parity(of data: [[UInt8]], parityCount: Int) -> [[UInt8]]
    /// The `dataCount` data shards back from `shards`: the k data shards then the m parity shards,
    /// nil where missing, all present ones of one length. Nil when fewer than k are present.
    func recover(_ shards: [[UInt8]?], dataCount: Int) -> [[UInt8]]?
}
