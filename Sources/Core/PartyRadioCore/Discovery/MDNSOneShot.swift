/// One-shot multicast DNS queries (RFC 6762 §5.1, §6.7): a question sent to the mDNS group from
/// an ordinary port, which responders answer by unicast, at once, to that port. A guest that names
/// its station asks the station's SRV and TXT records this way and has its answer in a few
/// milliseconds, while avahi-daemon holds a new query back about 100 ms before it sends it.
///
/// The packets are built and read here, without I/O, so the reader is fuzzed (`dns`) and tested
/// with malformed replies. A reply is untrusted like any mDNS answer: the station's key is checked
/// by the node when the station speaks, as for a station found by browsing.
public enum MDNSOneShot {
    public static let port: UInt16 = 5353
    public static let ipv4Group = "224.0.0.251"
    public static let ipv6Group = "ff02::fb"

    /// The record types asked for and read.
    public enum RecordType: UInt16, Sendable {
        case a = 1
        case txt = 16
        case aaaa = 28
        case srv = 33
    }

    /// What a reply said about one instance. Records about other names are ignored.
    public struct Records: Equatable, Sendable {
        /// The SRV record's port and target host name (labels), when the reply had it.
        public var port: UInt16?
        public var target: [[UInt8]]?
        /// The TXT record's strings, when the reply had it (order as on the wire).
        public var txt: [String]?
        /// Addresses of the SRV target (A: 4 bytes, AAAA: 16), when the reply carried them along.
        public var ipv4: [[UInt8]] = []
        public var ipv6: [[UInt8]] = []

        public init() {}

        /// Adds what `other` knows (a later reply) to this.
        public mutating func merge(_ other: Records) {
            if let port = other.port, let target = other.target { (self.port, self.target) = (port, target) }
            if let txt = other.txt { self.txt = txt }
            for address in other.ipv4 where !ipv4.contains(address) { ipv4.append(address) }
            for address in other.ipv6 where !ipv6.contains(address) { ipv6.append(address) }
        }

        /// SRV, TXT and at least one address: enough to reach the station.
        public var isComplete: Bool { port != nil && txt != nil && !(ipv4.isEmpty && ipv6.isEmpty) }
    }

    /// The name of instance `instance` of service `type` (`_partyradio._udp`) in `.local`, as
    /// labels; nil if a label is empty or too long or the name is longer than DNS allows.
    public static func serviceInstance(_ instance: String, type: String) -> [[UInt8]]? {
        let labels = [Array(instance.utf8)] + type.split(separator: ".").map { Array($0.utf8) } + [Array("local".utf8)]
        guard labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 }),
            labels.reduce(1, { $0 + $1.count + 1 }) <= 255
        else { return nil }
        return labels
    }

    /// A query with one question for `name`'s records of `type`, asking for a unicast reply (the
    /// QU bit; a legacy query is answered by unicast anyway).
    public static func query(id: UInt16, name: [[UInt8]], type: RecordType) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(18 + name.reduce(1) { $0 + $1.count + 1 })
        append16(id, to: &bytes)
        for field: UInt16 in [0, 1, 0, 0, 0] { append16(field, to: &bytes) }  // flags, QD, AN, NS, AR
        for label in name {
            bytes.append(UInt8(label.count))
            bytes += label
        }
        bytes.append(0)
        append16(type.rawValue, to: &bytes)
        append16(0x8001, to: &bytes)  // class IN, unicast response wanted
        return bytes
    }

    /// One resource record of a reply: its owner name, type and where its data is.
    struct Record {
        var owner: [[UInt8]]
        var type: UInt16
        var data: Range<Int>
    }

    /// Every record of a reply to query `id` (answers, authority, additional); nil when the bytes
    /// are no well-formed reply to that query.
    static func records(_ bytes: [UInt8], id: UInt16) -> [Record]? {
        var reader = Reader(bytes: bytes)
        guard let replyID = reader.u16(), replyID == id, let flags = reader.u16(), flags & 0x8000 != 0,
            flags & 0x000F == 0,  // a response, and no error
            let questions = reader.u16(), let answers = reader.u16(), let authority = reader.u16(),
            let additional = reader.u16()
        else { return nil }
        for _ in 0..<questions {
            guard reader.name() != nil, reader.skip(4) else { return nil }
        }
        var records: [Record] = []
        for _ in 0..<(Int(answers) + Int(authority) + Int(additional)) {
            guard let owner = reader.name(), let type = reader.u16(), reader.u16() != nil, reader.skip(4),
                let length = reader.u16(), let data = reader.take(Int(length))
            else { return nil }
            records.append(Record(owner: owner, type: type, data: data))
        }
        return records
    }

    /// Reads a reply to query `id` for what it says about instance `name`: its SRV and TXT records,
    /// and the addresses of the SRV target it names, else of `knownTarget` (the target an earlier
    /// reply named: this is the reply to the question for its addresses). Names are compared
    /// without regard to ASCII case, as DNS does. One read of the bytes, whatever the reply
    /// answers. Nil when the bytes are no well-formed reply to the query.
    public static func parse(_ bytes: [UInt8], id: UInt16, name: [[UInt8]], knownTarget: [[UInt8]]? = nil)
        -> Records?
    {
        guard let all = records(bytes, id: id) else { return nil }
        var found = Records()
        for record in all where same(record.owner, name) {
            switch RecordType(rawValue: record.type) {
            case .srv:
                var srv = Reader(bytes: bytes, at: record.data.lowerBound)
                guard srv.skip(4), let port = srv.u16(), let target = srv.name(),
                    srv.position == record.data.upperBound
                else { return nil }
                (found.port, found.target) = (port, target)
            case .txt:
                guard let strings = txtStrings(bytes[record.data]) else { return nil }
                found.txt = strings
            default: break
            }
        }
        if let target = found.target ?? knownTarget { addAddresses(of: target, from: all, in: bytes, to: &found) }
        return found
    }

    private static func addAddresses(
        of target: [[UInt8]], from all: [Record], in bytes: [UInt8], to found: inout Records
    ) {
        for record in all where same(record.owner, target) {
            let data = Array(bytes[record.data])
            switch RecordType(rawValue: record.type) {
            case .a where data.count == 4: if !found.ipv4.contains(data) { found.ipv4.append(data) }
            case .aaaa where data.count == 16: if !found.ipv6.contains(data) { found.ipv6.append(data) }
            default: break
            }
        }
    }

    /// TXT rdata: character-strings, each a length byte and that many bytes; nil if malformed.
    static func txtStrings(_ data: ArraySlice<UInt8>) -> [String]? {
        var strings: [String] = []
        var i = data.startIndex
        while i < data.endIndex {
            let length = Int(data[i])
            guard i + 1 + length <= data.endIndex else { return nil }
            if length > 0 { strings.append(String(decoding: data[(i + 1)..<(i + 1 + length)], as: UTF8.self)) }
            i += 1 + length
        }
        return strings
    }

    /// Two names equal under DNS's rule (ASCII letters compared without case).
    static func same(_ a: [[UInt8]], _ b: [[UInt8]]) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            guard x.count == y.count else { return false }
            for (p, q) in zip(x, y) where lower(p) != lower(q) { return false }
        }
        return true
    }

    private static func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

    private static func append16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    /// Reads a DNS message: fixed-size fields and names with compression pointers (RFC 1035
    /// §4.1.4), every read bounds-checked, pointers only backwards and at most 64 of them.
    struct Reader {
        let bytes: [UInt8]
        var position: Int

        init(bytes: [UInt8], at position: Int = 0) {
            self.bytes = bytes
            self.position = position
        }

        mutating func u16() -> UInt16? {
            guard position + 2 <= bytes.count else { return nil }
            defer { position += 2 }
            return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
        }

        mutating func skip(_ count: Int) -> Bool {
            guard position + count <= bytes.count else { return false }
            position += count
            return true
        }

        mutating func take(_ count: Int) -> Range<Int>? {
            guard position + count <= bytes.count else { return nil }
            defer { position += count }
            return position..<(position + count)
        }

        mutating func name() -> [[UInt8]]? {
            var labels: [[UInt8]] = []
            var total = 1
            var at = position
            var jumped = false
            var jumps = 0
            while true {
                guard at < bytes.count else { return nil }
                let length = Int(bytes[at])
                switch length & 0xC0 {
                case 0:
                    if length == 0 {
                        if !jumped { position = at + 1 }
                        return labels
                    }
                    total += length + 1
                    guard total <= 255, at + 1 + length <= bytes.count else { return nil }
                    labels.append(Array(bytes[(at + 1)..<(at + 1 + length)]))
                    at += 1 + length
                case 0xC0:
                    guard at + 1 < bytes.count else { return nil }
                    let target = (length & 0x3F) << 8 | Int(bytes[at + 1])
                    jumps += 1
                    guard target < at, jumps <= 64 else { return nil }
                    if !jumped { position = at + 2 }
                    jumped = true
                    at = target
                default: return nil  // 0x40 and 0x80: label types no longer in use
                }
            }
        }
    }
}
