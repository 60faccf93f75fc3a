/// What plays next: the guests' requests in the order they will play (votes, then age), then
/// the next tracks of the DJ's own queue. Sent to the group when it changes and every few
/// seconds, and to an observer that asks (`partyradio queue`).
///
/// As many entries as fit one datagram are carried (``Limit/bodyBytes``), in order; `total`
/// says how many requests are waiting in all.
public struct QueueList: WireMessage {
    public static let kind = MessageKind.queueList

    public struct Entry: Hashable, Sendable, Codable {
        /// The request's ID for `vote --request`; 0 for a track of the DJ's own queue.
        public var queueID: UInt32
        public var trackID: String
        public var title: String
        public var artist: String
        /// Who asked (empty for the DJ's own queue).
        public var requester: String
        public var tally: Tally
        /// Waiting for the DJ's approval; it does not play before.
        public var awaitingApproval: Bool

        public init(
            queueID: UInt32, trackID: String, title: String, artist: String, requester: String, tally: Tally,
            awaitingApproval: Bool
        ) {
            self.queueID = queueID
            self.trackID = trackID
            self.title = title
            self.artist = artist
            self.requester = requester
            self.tally = tally
            self.awaitingApproval = awaitingApproval
        }

        public var isRequest: Bool { queueID != 0 }
    }

    public enum Limit {
        /// Per-field cuts in UTF-8 bytes, so that several entries fit a datagram.
        public static let trackID = 64, title = 80, artist = 60, requester = ChatSend.Limit.name
        /// The body never grows past this (the datagram is 1,200 bytes with header and signature).
        public static let bodyBytes = 1000
        public static let maxEntries = 40
    }

    /// How requests are taken: the DJ's `--requests` mode.
    public var mode: RequestMode
    /// Requests waiting in all (the list may carry fewer).
    public var total: UInt32
    public var entries: [Entry]

    public init(mode: RequestMode, total: UInt32, entries: [Entry]) {
        self.mode = mode
        self.total = total
        self.entries = entries
    }

    /// The entries that fit one datagram, in order.
    public var carried: [Entry] {
        var size = 6
        var out: [Entry] = []
        for entry in entries.prefix(Limit.maxEntries) {
            let entrySize = Self.encodedSize(entry)
            guard size + entrySize <= Limit.bodyBytes else { break }
            size += entrySize
            out.append(entry)
        }
        return out
    }

    private static func encodedSize(_ entry: Entry) -> Int {
        var writer = ByteWriter()
        encode(entry, into: &writer)
        return writer.bytes.count
    }

    private static func encode(_ entry: Entry, into writer: inout ByteWriter) {
        writer.write(entry.queueID)
        writer.writeString(entry.trackID, maxBytes: Limit.trackID)
        writer.writeString(entry.title, maxBytes: Limit.title)
        writer.writeString(entry.artist, maxBytes: Limit.artist)
        writer.writeString(entry.requester, maxBytes: Limit.requester)
        writer.write(entry.tally.up)
        writer.write(entry.tally.down)
        writer.write(UInt8(entry.awaitingApproval ? 1 : 0))
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(mode.code)
        writer.write(total)
        let shown = carried
        writer.write(UInt8(shown.count))
        for entry in shown { Self.encode(entry, into: &writer) }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        let rawMode = try reader.readUInt8()
        guard let mode = RequestMode(code: rawMode) else { throw .malformed("request mode \(rawMode)") }
        self.mode = mode
        total = try reader.read(UInt32.self)
        let count = Int(try reader.readUInt8())
        guard count <= Limit.maxEntries else { throw .malformed("queue of \(count)") }
        var entries: [Entry] = []
        for _ in 0..<count {
            let queueID = try reader.read(UInt32.self)
            let trackID = try reader.readString(maxBytes: Limit.trackID)
            let title = try reader.readString(maxBytes: Limit.title)
            let artist = try reader.readString(maxBytes: Limit.artist)
            let requester = try reader.readString(maxBytes: Limit.requester)
            let tally = Tally(up: try reader.read(UInt32.self), down: try reader.read(UInt32.self))
            let flag = try reader.readUInt8()
            guard flag <= 1 else { throw .malformed("approval flag \(flag)") }
            entries.append(
                Entry(
                    queueID: queueID, trackID: trackID, title: title, artist: artist, requester: requester,
                    tally: tally, awaitingApproval: flag == 1))
        }
        self.entries = entries
    }
}

/// How a DJ takes requests (`dj --requests`).
public enum RequestMode: String, Sendable, CaseIterable, Codable {
    /// Every request is queued at once.
    case open
    /// Requests wait for the DJ's approval before they can play.
    case approve
    /// No requests.
    case off

    var code: UInt8 {
        switch self {
        case .open: 0
        case .approve: 1
        case .off: 2
        }
    }

    init?(code: UInt8) {
        guard let mode = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = mode
    }
}
