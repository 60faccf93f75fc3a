/// What the DJ's web server relays of a live station to the pages that listen (docs/WEB.md,
/// "Live stations in the browser"): browsers cannot join a multicast group, so `GET /api/live` is a
/// streaming HTTP response of the station's live frames as the DJ sends them. Pure: the framing, the
/// ring of recent records every stream reads from, and the caps; the server's threads only wait on it.
///
/// **Records.** `type (u8) ‖ length (u16, big-endian) ‖ body (length bytes)`:
/// - type 0, keep-alive: no body (the station is silent; sent every few seconds so that the stream
///   stays open and the page knows it is alive);
/// - type 1, frame: the live frame's body exactly as on the wire (kind 23, docs/PROTOCOL.md): frame
///   number u64, first sample i64 ns on the station clock, codec u8, duration u8 (2.5 ms units),
///   `u16 length ‖ Opus packet`;
/// - type 2, station: the station's delay in ms (u16), the first record of every stream.
///
/// TCP loses nothing, so only frames are relayed, never the FEC repairs (kind 24).
public enum LiveWebRecord {
    public static let keepAliveType: UInt8 = 0
    public static let frameType: UInt8 = 1
    public static let stationType: UInt8 = 2

    public static func frame(_ frame: LiveFrame) -> [UInt8] {
        var body = ByteWriter()
        frame.encode(into: &body)
        return record(frameType, body.bytes)
    }

    public static func station(delayMs: Int) -> [UInt8] {
        var body = ByteWriter()
        body.write(UInt16(clamping: delayMs))
        return record(stationType, body.bytes)
    }

    public static let keepAlive: [UInt8] = [keepAliveType, 0, 0]

    static func record(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(type)
        writer.write(UInt16(body.count))  // a frame's body is at most 22 + 1000 bytes
        writer.write(bytes: body)
        return writer.bytes
    }
}

/// The relay's state: the last ``Limits/ring`` records and who reads them. A stream keeps a cursor
/// (the number of the next record it sends); the DJ's thread publishes each frame once, whatever the
/// number of pages. A reader that falls a whole ring behind (a slow or stalled client, whose TCP
/// window is full) is dropped, never buffered for: the ring is all the memory the relay holds.
public struct LiveWebRelayState: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Live streams open at once in all.
        public var streams: Int
        /// Live streams open at once from one machine (a page needs one; a reload briefly two).
        public var perMachine: Int
        /// Records kept: at 10 ms frames, 128 is 1.28 s, far beyond any station delay.
        public var ring: Int

        public init(streams: Int = 32, perMachine: Int = 2, ring: Int = 128) {
            self.streams = max(1, streams)
            self.perMachine = max(1, min(perMachine, self.streams))
            self.ring = max(1, ring)
        }
    }

    public enum Admission: Sendable, Equatable {
        /// Admitted: the stream starts at this cursor (the next record published).
        case admitted(cursor: UInt64)
        /// Every live stream is taken.
        case full
        /// This machine holds ``Limits/perMachine`` streams already.
        case machineFull
    }

    public enum Read: Sendable, Equatable {
        /// Records from the cursor on, and the cursor after them.
        case records([UInt8], next: UInt64)
        /// Nothing new yet.
        case nothing
        /// The cursor fell off the ring: the stream is dropped.
        case behind
    }

    public let limits: Limits
    /// Records published so far; record n sits at ring[n % limits.ring].
    public private(set) var published: UInt64 = 0
    private var ring: [[UInt8]] = []
    /// Open streams by machine.
    public private(set) var streams: [String: Int] = [:]
    /// Readers dropped for falling behind, since the start.
    public private(set) var dropped = 0

    public init(limits: Limits = Limits()) { self.limits = limits }

    public var openStreams: Int { streams.values.reduce(0, +) }

    /// One more frame for every stream.
    public mutating func publish(_ record: [UInt8]) {
        if ring.count < limits.ring {
            ring.append(record)
        } else {
            ring[Int(published % UInt64(limits.ring))] = record
        }
        published += 1
    }

    /// A page on `machine` asks for the stream.
    public mutating func admit(machine: String) -> Admission {
        if openStreams >= limits.streams { return .full }
        if streams[machine, default: 0] >= limits.perMachine { return .machineFull }
        streams[machine, default: 0] += 1
        return .admitted(cursor: published)
    }

    /// A stream admitted for `machine` ended.
    public mutating func release(machine: String) {
        guard let count = streams[machine] else { return }
        streams[machine] = count > 1 ? count - 1 : nil
    }

    /// What a stream at `cursor` sends next: at most `maxBytes` of whole records (at least one).
    public func read(from cursor: UInt64, maxBytes: Int = 16_384) -> Read {
        if cursor >= published { return .nothing }
        if published - cursor > UInt64(ring.count) { return .behind }
        var bytes: [UInt8] = []
        var next = cursor
        while next < published {
            let record = ring[Int(next % UInt64(limits.ring))]
            if !bytes.isEmpty && bytes.count + record.count > maxBytes { break }
            bytes += record
            next += 1
        }
        return .records(bytes, next: next)
    }

    /// A stream that was found behind is counted once.
    public mutating func countDropped() { dropped += 1 }
}
