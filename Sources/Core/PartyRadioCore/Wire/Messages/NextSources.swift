/// Where the tracks that play next are fetched from (kind 21): the DJ's queue list names them but
/// carries no source, and a catalog track's preview URL cannot be derived from anything else a
/// listener has, so without this a listener learnt it only from the snapshot that starts it.
/// Sent to the group with the queue list (on every change and every 2 s) whenever one of the
/// tracks is not from the DJ's library (those a listener derives from the playing track's URL).
///
/// Each source is untrusted input: an entry is carried only when its ID fits (1–64 bytes, never
/// cut: a cut ID names no track) and its source is a fetchable URL (``MediaSource``); a receiver
/// treats anything else as malformed.
public struct NextSources: WireMessage {
    public static let kind = MessageKind.nextSources

    public struct Entry: Hashable, Sendable {
        public var trackID: String
        public var source: String

        public init(trackID: String, source: String) {
            self.trackID = trackID
            self.source = source
        }

        /// Whether the wire can carry this entry as it is.
        public var isCarried: Bool {
            (1...Limit.trackID).contains(trackID.utf8.count) && MediaSource.isFetchable(source)
        }
    }

    public enum Limit {
        public static let trackID = 64, source = MediaSource.maxBytes
        /// As many as a listener fetches ahead; two at their limits fit one datagram (935 bytes).
        public static let maxEntries = 2
    }

    /// In the order they play.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// The next tracks' sources as the wire carries them: the first ``Limit/maxEntries`` tracks,
    /// those whose ID or source the wire cannot carry left out.
    public init(tracks: some Sequence<Track>) {
        entries = Array(
            tracks.lazy.prefix(Limit.maxEntries).map { Entry(trackID: $0.id, source: $0.source) }.filter(\.isCarried))
    }

    /// The entries that go out.
    public var carried: [Entry] { Array(entries.lazy.filter(\.isCarried).prefix(Limit.maxEntries)) }

    /// The source the DJ gave for `trackID`, if any.
    public func source(of trackID: String) -> String? { entries.first { $0.trackID == trackID }?.source }

    public func encode(into writer: inout ByteWriter) {
        let shown = carried
        writer.write(UInt8(shown.count))
        for entry in shown {
            writer.writeString(entry.trackID, maxBytes: Limit.trackID)
            writer.writeLongString(entry.source, maxBytes: Limit.source)
        }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        let count = Int(try reader.readUInt8())
        guard count <= Limit.maxEntries else { throw .malformed("\(count) next sources") }
        var entries: [Entry] = []
        for _ in 0..<count {
            let trackID = try reader.readString(maxBytes: Limit.trackID)
            guard !trackID.isEmpty else { throw .malformed("empty track ID") }
            let source = try reader.readLongString(maxBytes: Limit.source)
            guard MediaSource.isFetchable(source) else { throw .malformed("source is not a fetchable URL") }
            entries.append(Entry(trackID: trackID, source: source))
        }
        self.entries = entries
    }
}
