/// The station's whole state: sent by the DJ to the group at least once a second, on every
/// change, and unicast in answer to a hello or a query.
public struct StateSnapshot: WireMessage {
    public static let kind = MessageKind.stateSnapshot

    public var stationName: String
    public var nowPlaying: Track?
    public var anchor: PlaybackAnchor
    public var tally: Tally
    public var listenerCount: UInt32
    public var queueLength: UInt32
    /// Zero-based index of the now-playing track in the queue.
    public var queueIndex: UInt32
    /// The DJ clock when this snapshot was sent.
    public var sentAtNs: Int64

    public init(
        stationName: String, nowPlaying: Track?, anchor: PlaybackAnchor, tally: Tally, listenerCount: UInt32,
        queueLength: UInt32, queueIndex: UInt32, sentAtNs: Int64
    ) {
        self.stationName = stationName
        self.nowPlaying = nowPlaying
        self.anchor = anchor
        self.tally = tally
        self.listenerCount = listenerCount
        self.queueLength = queueLength
        self.queueIndex = queueIndex
        self.sentAtNs = sentAtNs
    }

    /// Field limits in UTF-8 bytes; longer values are cut at a character boundary so that
    /// the largest snapshot still fits in one datagram.
    public enum Limit {
        public static let name = 180, trackID = 64, text = 100, source = 400
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(stationName, maxBytes: Limit.name)
        writer.write(sentAtNs)
        writer.write(anchor.djTime.ns)
        writer.write(anchor.positionNs)
        writer.write(anchor.rateMicros)
        writer.write(tally.up)
        writer.write(tally.down)
        writer.write(listenerCount)
        writer.write(queueLength)
        writer.write(queueIndex)
        guard let track = nowPlaying else {
            writer.write(UInt8(0))
            return
        }
        writer.write(UInt8(1))
        writer.writeString(track.id, maxBytes: Limit.trackID)
        writer.writeString(track.title, maxBytes: Limit.text)
        writer.writeString(track.artist, maxBytes: Limit.text)
        writer.writeString(track.album, maxBytes: Limit.text)
        writer.write(track.durationMs)
        writer.writeLongString(track.source, maxBytes: Limit.source)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        stationName = try reader.readString(maxBytes: Limit.name)
        sentAtNs = try reader.read(Int64.self)
        anchor = PlaybackAnchor(
            djTime: DJTime(ns: try reader.read(Int64.self)), positionNs: try reader.read(Int64.self),
            rateMicros: try reader.read(UInt32.self))
        tally = Tally(up: try reader.read(UInt32.self), down: try reader.read(UInt32.self))
        listenerCount = try reader.read(UInt32.self)
        queueLength = try reader.read(UInt32.self)
        queueIndex = try reader.read(UInt32.self)
        switch try reader.readUInt8() {
        case 0:
            nowPlaying = nil
        case 1:
            let id = try reader.readString(maxBytes: Limit.trackID)
            let title = try reader.readString(maxBytes: Limit.text)
            let artist = try reader.readString(maxBytes: Limit.text)
            let album = try reader.readString(maxBytes: Limit.text)
            let duration = try reader.read(UInt32.self)
            let source = try reader.readLongString(maxBytes: Limit.source)
            nowPlaying = Track(id: id, title: title, artist: artist, album: album, durationMs: duration, source: source)
        case let flag:
            throw .malformed("now-playing flag \(flag)")
        }
    }
}
