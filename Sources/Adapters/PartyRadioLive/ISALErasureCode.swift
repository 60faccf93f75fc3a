import CISAL
import PartyRadioCore

/// Reed–Solomon over GF(2^8) by Intel's ISA-L (docs/LIVE.md, "The FEC"): the k + m rows of a
/// Cauchy matrix (`gf_gen_cauchy1_matrix`; its top k rows are the identity, so the code is
/// systematic, and any k rows are invertible), parity by `ec_encode_data`, and recovery by the same
/// call with the rows of the inverted sub-matrix of the shards that are there. Stateless: the
/// tables are made per block, a few hundred bytes for the blocks live audio uses.
public struct ISALErasureCode: ErasureCode {
    /// ISA-L's limit on data plus parity shards.
    public static let maxShards = 255

    public init() {}

    public func parity(of data: [[UInt8]], parityCount: Int) -> [[UInt8]] {
        let k = data.count
        precondition(k >= 1 && parityCount >= 1 && k + parityCount <= Self.maxShards, "a block of \(k)+\(parityCount)")
        let length = data[0].count
        precondition(data.allSatisfy { $0.count == length }, "shards of one length")
        let matrix = Self.encodeMatrix(rows: k + parityCount, columns: k)
        let parityRows = Array(matrix[(k * k)...])
        return Self.multiply(rows: parityRows, count: parityCount, k: k, sources: data, length: length)
    }

    public func recover(_ shards: [[UInt8]?], dataCount k: Int) -> [[UInt8]]? {
        let total = shards.count
        guard k >= 1, total >= k, total <= Self.maxShards else { return nil }
        let present = shards.indices.filter { shards[$0] != nil }
        guard present.count >= k, let length = shards[present[0]]?.count, length > 0,
            present.allSatisfy({ shards[$0]?.count == length })
        else { return nil }
        let missing = (0..<k).filter { shards[$0] == nil }
        if missing.isEmpty { return (0..<k).map { shards[$0]! } }
        // The first k shards there, and the k × k rows of the encoding matrix that made them.
        let survivors = Array(present.prefix(k))
        let matrix = Self.encodeMatrix(rows: total, columns: k)
        var chosen = [UInt8](repeating: 0, count: k * k)
        for (row, index) in survivors.enumerated() {
            for column in 0..<k { chosen[row * k + column] = matrix[index * k + column] }
        }
        var inverse = [UInt8](repeating: 0, count: k * k)
        guard gf_invert_matrix(&chosen, &inverse, Int32(k)) == 0 else { return nil }
        // A missing data shard is its row of the inverse applied to the survivors.
        var rows: [UInt8] = []
        rows.reserveCapacity(missing.count * k)
        for index in missing { rows += inverse[(index * k)..<(index * k + k)] }
        let rebuilt = Self.multiply(
            rows: rows, count: missing.count, k: k, sources: survivors.map { shards[$0]! }, length: length)
        var data = (0..<k).map { shards[$0] ?? [] }
        for (slot, index) in missing.enumerated() { data[index] = rebuilt[slot] }
        return data
    }

    // MARK: ISA-L

    private static func encodeMatrix(rows: Int, columns: Int) -> [UInt8] {
        var matrix = [UInt8](repeating: 0, count: rows * columns)
        gf_gen_cauchy1_matrix(&matrix, Int32(rows), Int32(columns))
        return matrix
    }

    /// `count` outputs, each the GF(2^8) combination of the k `sources` by one k-wide row of `rows`.
    private static func multiply(rows: [UInt8], count: Int, k: Int, sources: [[UInt8]], length: Int) -> [[UInt8]] {
        var coefficients = rows
        var tables = [UInt8](repeating: 0, count: k * count * 32)
        ec_init_tables(Int32(k), Int32(count), &coefficients, &tables)
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: k * length)
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: count * length)
        defer {
            input.deallocate()
            output.deallocate()
        }
        for (index, source) in sources.enumerated() {
            source.withUnsafeBufferPointer { (input + index * length).update(from: $0.baseAddress!, count: length) }
        }
        output.initialize(repeating: 0, count: count * length)
        var inputs = (0..<k).map { Optional(input + $0 * length) }
        var outputs = (0..<count).map { Optional(output + $0 * length) }
        ec_encode_data(Int32(length), Int32(k), Int32(count), &tables, &inputs, &outputs)
        return (0..<count).map { Array(UnsafeBufferPointer(start: output + $0 * length, count: length)) }
    }
}
