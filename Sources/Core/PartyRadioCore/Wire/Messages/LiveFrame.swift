/// One frame of a live station's audio (docs/LIVE.md, "Live frame"): an Opus packet stamped with
/// its frame number, the station-clock time of its first sample and the station's delay (how long
/// after that time every speaker plays it).
public struct LiveFrame: WireMessage, Hashable {
    public static let kind = MessageKind.liveFrame
    /// The longest packet a frame carries, so that every frame fits one datagram.
    public static let maxPayload = 1000
    /// The body's bytes besides the packet: number, time, delay, codec, duration, packet length.
    public static let fixedSize = 22
    /// The station delays a frame can carry, in milliseconds (`dj --latency`); any other is malformed.
    public static let delayRangeMs: ClosedRange<UInt16> = 1...5000
    /// The delay a station has when its DJ names none.
    public static let defaultDelayMs: UInt16 = 60

    /// Consecutive frames differ by one; a gap is a lost frame. Never wraps.
    public var sequence: UInt64
    /// The station-clock time of the frame's first sample.
    public var firstSample: DJTime
    /// The station's delay in milliseconds (``delayRangeMs``): the frame is heard at
    /// `firstSample` plus this on every speaker (a listener may add its own on top).
    public var delayMs: UInt16
    public var codec: LiveCodec
    public var duration: LiveFrameDuration
    /// The encoded audio, 1 … ``maxPayload`` bytes.
    public var payload: [UInt8]

    public init(
        sequence: UInt64, firstSample: DJTime, delayMs: UInt16 = LiveFrame.defaultDelayMs,
        codec: LiveCodec = .opusStereo48k, duration: LiveFrameDuration, payload: [UInt8]
    ) {
        self.sequence = sequence
        self.firstSample = firstSample
        self.delayMs = delayMs
        self.codec = codec
        self.duration = duration
        self.payload = payload
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(sequence)
        writeAudio(into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        let sequence = try reader.read(UInt64.self)
        self = try Self.readAudio(sequence: sequence, from: &reader)
    }

    /// The station's delay in nanoseconds.
    public var delayNs: Int64 { Int64(delayMs) * 1_000_000 }

    /// Everything but the number: a frame's part of its FEC data shard (``LiveFEC``).
    func writeAudio(into writer: inout ByteWriter) {
        writer.write(firstSample.ns)
        writer.write(delayMs)
        writer.write(codec.rawValue)
        writer.write(duration.rawValue)
        writer.write(UInt16(truncatingIfNeeded: payload.count))
        writer.write(bytes: payload)
    }

    static func readAudio(sequence: UInt64, from reader: inout ByteReader) throws(WireError) -> LiveFrame {
        let time = try reader.read(Int64.self)
        let delayMs = try reader.read(UInt16.self)
        guard delayRangeMs.contains(delayMs) else { throw .malformed("live station delay of \(delayMs) ms") }
        let codecByte = try reader.readUInt8()
        guard let codec = LiveCodec(rawValue: codecByte) else { throw .malformed("live codec \(codecByte)") }
        let durationByte = try reader.readUInt8()
        guard let duration = LiveFrameDuration(rawValue: durationByte) else {
            throw .malformed("live frame duration code \(durationByte)")
        }
        let length = Int(try reader.read(UInt16.self))
        guard (1...maxPayload).contains(length) else { throw .malformed("live packet of \(length) bytes") }
        let payload = try reader.readBytes(length)
        return LiveFrame(
            sequence: sequence, firstSample: DJTime(ns: time), delayMs: delayMs, codec: codec, duration: duration,
            payload: payload)
    }
}

/// What a live frame's payload is. One value today; a receiver treats any other as malformed.
public enum LiveCodec: UInt8, Sendable, Hashable {
    /// Opus at 48 kHz, 2 channels.
    case opusStereo48k = 1

    public var sampleRate: Int { 48_000 }
    public var channels: Int { 2 }
}

/// A live frame's duration, in units of 2.5 ms as on the wire: the four Opus frame sizes a live
/// station uses.
public enum LiveFrameDuration: UInt8, Sendable, Hashable, CaseIterable {
    case ms2point5 = 1
    case ms5 = 2
    case ms10 = 4
    case ms20 = 8

    /// The duration in nanoseconds.
    public var ns: Int64 { Int64(rawValue) * 2_500_000 }
    /// Samples per channel at `sampleRate`.
    public func samples(at sampleRate: Int = 48_000) -> Int { sampleRate * Int(rawValue) / 400 }
    /// The duration of `ms` milliseconds (2.5 as 2.5), if it is one of the four.
    public init?(milliseconds ms: Double) {
        guard let match = Self.allCases.first(where: { Double($0.rawValue) * 2.5 == ms }) else { return nil }
        self = match
    }
}
