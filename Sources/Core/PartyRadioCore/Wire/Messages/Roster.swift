/// Who is listening: the DJ's listener list, with names and how long each has been listening.
/// Sent to the group when it changes and every few seconds, and to an observer after the
/// snapshot that answers its query, so `stations` can show the names.
public struct Roster: WireMessage {
    public static let kind = MessageKind.roster

    public struct Entry: Hashable, Sendable {
        public var name: String
        /// How long this listener has been tuned in, by the DJ's clock.
        public var listeningForMs: UInt32

        public init(name: String, listeningForMs: UInt32) {
            self.name = name
            self.listeningForMs = listeningForMs
        }
    }

    /// Field limits: a name takes at most 64 bytes of UTF-8 (32 characters may need more than 32
    /// bytes); at most ``maxEntries`` entries fit any datagram, the longest-listening first.
    public enum Limit {
        public static let name = 64
        public static let maxEntries = 15
    }

    /// Every listener the DJ counts, even those the list leaves out.
    public var total: UInt32
    public var entries: [Entry]

    public init(total: UInt32, entries: [Entry]) {
        self.total = total
        self.entries = Array(entries.prefix(Limit.maxEntries))
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(total)
        let shown = entries.prefix(Limit.maxEntries)
        writer.write(UInt8(shown.count))
        for entry in shown {
            writer.writeString(entry.name, maxBytes: Limit.name)
            writer.write(entry.listeningForMs)
        }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        total = try reader.read(UInt32.self)
        let count = Int(try reader.readUInt8())
        guard count <= Limit.maxEntries else { throw .malformed("roster of \(count)") }
        var entries: [Entry] = []
        for _ in 0..<count {
            entries.append(
                Entry(name: try reader.readString(maxBytes: Limit.name), listeningForMs: try reader.read(UInt32.self)))
        }
        self.entries = entries
    }
}
