import Testing

@testable import PartyRadioCore

@Suite struct MappedRegionTests {
    static let maps = """
        55d0c3a4e000-55d0c3a50000 r--p 00000000 fe:01 1310799                    /usr/bin/cat
        7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 
        7f1c2b4a2000-7f1c2b4c8000 r--p 00000000 fe:01 1321544                    /usr/lib/x86_64-linux-gnu/libc.so.6
        7f1c2b4c8000-7f1c2b61d000 r-xp 00026000 fe:01 1321544                    /usr/lib/x86_64-linux-gnu/libc.so.6
        7f1c2b700000-7f1c2b701000 rw-s 00000000 00:05 4242                       /dev/shm/a file (deleted)
        7ffd5a1f0000-7ffd5a211000 rw-p 00000000 00:00 0                          [stack]
        7ffd5a3c4000-7ffd5a3c6000 r-xp 00000000 00:00 0                          [vdso]
        """

    @Test func readsEveryFieldOfTheKernelsLines() throws {
        let regions = MappedRegion.parse(Self.maps)
        #expect(regions.count == 7)
        let libc = regions[3]
        #expect(libc.start == 0x7f1c_2b4c_8000 && libc.end == 0x7f1c_2b61_d000)
        #expect(libc.length == 0x155000)
        #expect(libc.permissions == "r-xp" && libc.inode == 1_321_544)
        #expect(libc.path == "/usr/lib/x86_64-linux-gnu/libc.so.6")
        #expect(libc.isFile && libc.isPrivate)
        #expect(!regions[1].isFile && regions[1].path.isEmpty)
        #expect(!regions[5].isFile && regions[5].path == "[stack]")
        #expect(regions[4].path == "/dev/shm/a file (deleted)" && !regions[4].isPrivate)
    }

    @Test func malformedLinesAreSkipped() {
        let bad = [
            "", "   ", "garbage", "7f-7e r--p 0 fe:01 1 /backwards", "7f-7f r--p 0 fe:01 1 /empty",
            "zz-7f r--p 0 fe:01 1 /nothex", "10-20 r--q 0 fe:01 1 /perm", "10-20 r--p 0 fe01 1 /dev",
            "10-20 r--p xyz fe:01 1 /offset", "10-20 r--p 0 fe:01 -1 /inode", "10-20 r--p 0 fe:01",
            "10-20-30 r--p 0 fe:01 1 /x", "10000000000000000-20000000000000000 r--p 0 fe:01 1 /huge",
        ]
        for line in bad { #expect(MappedRegion(line: Substring(line)) == nil, "\(line)") }
        #expect(
            MappedRegion(line: "10-20 r--p 0 fe:01 1")
                == MappedRegion(start: 16, end: 32, permissions: "r--p", inode: 1, path: ""))
    }

    /// Random bytes and mangled kernel lines: never a crash, and whatever is read is a well-formed region.
    @Test func randomInputNeverCrashes() {
        var random = SplitMix64(seed: 2026)
        let alphabet = Array("0123456789abcdef- :/rwxps\n[]()".utf8)
        let lines = Self.maps.split(separator: "\n").map(String.init)
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 120)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))]
                }
            } else {
                bytes = Array(lines[Int(random.next() % UInt64(lines.count))].utf8)
                for _ in 0..<(1 + random.next() % 4) where !bytes.isEmpty {
                    let at = Int(random.next() % UInt64(bytes.count))
                    if random.next() % 2 == 0 {
                        bytes.remove(at: at)
                    } else {
                        bytes[at] = UInt8(truncatingIfNeeded: random.next())
                    }
                }
            }
            for region in MappedRegion.parse(String(decoding: bytes, as: UTF8.self)) {
                #expect(region.start < region.end)
                #expect(region.permissions.count == 4)
            }
        }
    }

    static let present: UInt64 = 1 << 63
    static let swapped: UInt64 = 1 << 62
    static let file: UInt64 = 1 << 61

    @Test func writableIsReadFromThePermissions() {
        let regions = MappedRegion.parse(Self.maps)
        #expect(!regions[0].isWritable && !regions[3].isWritable)
        #expect(regions[1].isWritable && regions[4].isWritable)
    }

    @Test func privateCopiesSplitTheRunsAndRunsWithNothingResidentAreLeftOut() {
        let (p, s, f) = (Self.present, Self.swapped, Self.file)
        #expect(MappedRegion.droppableRuns([]) == [])
        #expect(MappedRegion.droppableRuns([0, 0, 0]) == [])
        #expect(MappedRegion.droppableRuns([p | f, 0, p | f]) == [0..<3])
        // A resident copy (the loader's relocations) and a copy in swap are both kept.
        #expect(MappedRegion.droppableRuns([p | f, p, 0, p | f, s, p | f]) == [0..<1, 2..<4, 5..<6])
        #expect(MappedRegion.droppableRuns([p, p, 0, 0, p]) == [])
        // A file page in swap's migration entry form is the file's, not a copy.
        #expect(MappedRegion.droppableRuns([s | f, p | f]) == [0..<2])
        #expect(PageMapEntry(raw: p).isPrivateCopy && PageMapEntry(raw: s).isPrivateCopy)
        #expect(!PageMapEntry(raw: p | f).isPrivateCopy && !PageMapEntry(raw: 0).isPrivateCopy)
    }

    /// Any entries: the runs are in order, apart, inside the region, hold no private copy, and every
    /// resident file page is in one.
    @Test func runsCoverEveryResidentFilePageAndNoCopy() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let entries = (0..<Int(random.next() % 40)).map { _ in random.next() }
            let runs = MappedRegion.droppableRuns(entries)
            var covered = Set<Int>()
            var last = -1
            for run in runs {
                #expect(run.lowerBound > last && run.upperBound <= entries.count && !run.isEmpty)
                last = run.upperBound - 1
                for index in run {
                    #expect(!PageMapEntry(raw: entries[index]).isPrivateCopy)
                    covered.insert(index)
                }
                #expect(run.contains { PageMapEntry(raw: entries[$0]).isPresent })
            }
            for (index, raw) in entries.enumerated() {
                let entry = PageMapEntry(raw: raw)
                if entry.isPresent && entry.isFilePage { #expect(covered.contains(index)) }
            }
        }
    }
}
