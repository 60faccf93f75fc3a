/// One parity shard of a block of live frames (docs/LIVE.md, "Live repair"): with any k of a
/// block's k data frames and m repairs, a listener has every frame of the block back.
public struct LiveRepair: WireMessage, Hashable {
    public static let kind = MessageKind.liveRepair
    public static let dataCountRange: ClosedRange<Int> = 1...16
    public static let parityCountRange: ClosedRange<Int> = 1...8
    /// A shard is a frame's audio fields (12 bytes) and its packet.
    public static let shardSizeRange: ClosedRange<Int> =
        (LiveFEC.shardOverhead + 1)...(LiveFEC.shardOverhead + LiveFrame.maxPayload)

    /// The block's first frame number; the block is `firstSequence ..< firstSequence + dataCount`.
    public var firstSequence: UInt64
    public var dataCount: Int
    public var parityCount: Int
    /// Which parity shard this is, `0 ..< parityCount`.
    public var parityIndex: Int
    public var shard: [UInt8]

    public init(firstSequence: UInt64, dataCount: Int, parityCount: Int, parityIndex: Int, shard: [UInt8]) {
        self.firstSequence = firstSequence
        self.dataCount = dataCount
        self.parityCount = parityCount
        self.parityIndex = parityIndex
        self.shard = shard
    }

    /// The block's frame numbers.
    public var sequences: ClosedRange<UInt64> { firstSequence...(firstSequence + UInt64(dataCount - 1)) }

    public func encode(into writer: inout ByteWriter) {
        writer.write(firstSequence)
        writer.write(UInt8(truncatingIfNeeded: dataCount))
        writer.write(UInt8(truncatingIfNeeded: parityCount))
        writer.write(UInt8(truncatingIfNeeded: parityIndex))
        writer.write(UInt16(truncatingIfNeeded: shard.count))
        writer.write(bytes: shard)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        firstSequence = try reader.read(UInt64.self)
        dataCount = Int(try reader.readUInt8())
        parityCount = Int(try reader.readUInt8())
        parityIndex = Int(try reader.readUInt8())
        guard Self.dataCountRange.contains(dataCount), Self.parityCountRange.contains(parityCount),
            parityIndex < parityCount
        else { throw .malformed("live repair block \(dataCount)+\(parityCount), index \(parityIndex)") }
        guard firstSequence <= UInt64.max - UInt64(dataCount - 1) else {
            throw .malformed("live repair block past the last frame number")
        }
        let length = Int(try reader.read(UInt16.self))
        guard Self.shardSizeRange.contains(length) else { throw .malformed("live repair shard of \(length) bytes") }
        shard = try reader.readBytes(length)
    }
}
