import PartyRadioCore

/// A stand-in erasure code for tests without ISA-L: one parity shard, the XOR of the data (so it
/// rebuilds one missing shard per block). The real Reed–Solomon is tested in PartyRadioLiveTests.
public struct XORCode: ErasureCode {
    public init() {}

    public func parity(of data: [[UInt8]], parityCount: Int) -> [[UInt8]] {
        precondition(parityCount == 1)
        return [data.dropFirst().reduce(data[0]) { zip($0, $1).map { $0 ^ $1 } }]
    }

    public func recover(_ shards: [[UInt8]?], dataCount: Int) -> [[UInt8]]? {
        let missing = (0..<dataCount).filter { shards[$0] == nil }
        if missing.isEmpty { return shards.prefix(dataCount).map { $0! } }
        guard missing.count == 1, shards.count > dataCount, let parity = shards[dataCount] else { return nil }
        var data = shards.prefix(dataCount).map { $0 ?? [] }
        data[missing[0]] = (0..<dataCount).filter { $0 != missing[0] }.reduce(parity) { acc, index in
            zip(acc, data[index]).map { $0 ^ $1 }
        }
        return data
    }
}
