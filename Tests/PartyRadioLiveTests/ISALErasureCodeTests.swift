import PartyRadioCore
import PartyRadioLive
import Testing

/// The FEC round trip on the real ISA-L: for random blocks and any erasures up to the parity
/// count, the data comes back byte for byte; beyond it, nothing is claimed.
@Suite struct ISALErasureCodeTests {
    @Test func anyKOfTheShardsGiveTheDataBack() {
        var random = SplitMix64(seed: 28)
        let code = ISALErasureCode()
        for _ in 0..<300 {
            let k = Int(random.next() % 16) + 1
            let m = Int(random.next() % 8) + 1
            let length = Int(random.next() % 300) + 13
            let data = (0..<k).map { _ in (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
            let parity = code.parity(of: data, parityCount: m)
            #expect(parity.count == m && parity.allSatisfy { $0.count == length })
            var shards: [[UInt8]?] = data + parity
            let erasures = Int(random.next() % UInt64(m + 1))
            var erased = Set<Int>()
            while erased.count < erasures { erased.insert(Int(random.next() % UInt64(k + m))) }
            for index in erased { shards[index] = nil }
            let same = code.recover(shards, dataCount: k) == data
            #expect(same, "k \(k) m \(m) erased \(erased.sorted())")
        }
    }

    @Test func tooFewShardsGiveNothing() {
        let code = ISALErasureCode()
        let data: [[UInt8]] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
        let parity = code.parity(of: data, parityCount: 1)
        #expect(code.recover([nil, nil, data[2], parity[0]], dataCount: 3) == nil)
    }
}
