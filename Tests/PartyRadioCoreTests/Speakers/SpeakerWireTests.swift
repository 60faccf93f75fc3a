import Testing

@testable import PartyRadioCore

/// The speaker messages on the wire (docs/PROTOCOL.md, "Speakers"): a value out of its range is
/// malformed, so a speaker never applies one, whoever signed it.
@Suite struct SpeakerWireTests {
    static let station = StationID(rawValue: 0x1234_5678_9ABC_DEF0)

    func decoded(_ message: Message) throws -> Message {
        try Datagram.decode(Datagram.encode(message, stationID: Self.station, sequence: 9, signer: FakeSigner(1)))
            .message
    }

    /// The bytes of a control with its settings written raw (volume, mute, delay), and its fields.
    func rawControl(volume: UInt8 = 50, muted: UInt8 = 0, delay: Int16 = 0, fields: UInt8 = 7, target: [UInt8]? = nil)
        -> [UInt8]
    {
        var writer = ByteWriter()
        writer.write(UInt64(5))
        writer.write(bytes: target ?? ([0] + [UInt8](repeating: 3, count: 32)))
        writer.write(fields)
        writer.write(volume)
        writer.write(muted)
        writer.write(delay)
        return writer.bytes
    }

    func decodeControl(_ bytes: [UInt8]) throws(WireError) -> SpeakerControl {
        var reader = ByteReader(bytes)
        return try SpeakerControl(from: &reader)
    }

    @Test("a control and a status come back as they were sent, at the limits of every range")
    func roundTrip() throws {
        for volume in [0, 100] {
            for delay in [-500, 0, 500] {
                let control = Message.speakerControl(
                    SpeakerControl(
                        controlID: .max, target: .room("Downstairs"), fields: [.volume, .delay],
                        settings: SpeakerSettings(volume: volume, muted: true, delayMs: delay)))
                #expect(try decoded(control) == control)
                let status = Message.speakerStatus(
                    SpeakerStatus(
                        name: "Kitchen", room: "", settings: SpeakerSettings(volume: volume, delayMs: delay),
                        playing: false, lastControl: 0))
                #expect(try decoded(status) == status)
            }
        }
    }

    /// The sync error and the trouble: sent and read back; a status cut before them is malformed
    /// (as every truncated message is); a trouble too long is cut.
    @Test("a status's sync error and trouble; a status without them is malformed")
    func syncErrorAndTrouble() throws {
        for error: Int32? in [nil, 0, -1, 250, Int32.max, Int32.min + 1] {
            let status = Message.speakerStatus(
                SpeakerStatus(
                    name: "Kitchen", room: "Down", settings: SpeakerSettings(), playing: true, lastControl: 3,
                    syncErrorUs: error, trouble: error == nil ? "the live output stopped (connection refused)" : ""))
            #expect(try decoded(status) == status)
        }
        // The body without the two: name, room, settings, playing, last control.
        var writer = ByteWriter()
        writer.writeString("Kitchen")
        writer.writeString("")
        SpeakerSettings(volume: 40).encode(into: &writer)
        writer.write(UInt8(1))
        writer.write(UInt64(7))
        var reader = ByteReader(writer.bytes)
        #expect(throws: WireError.self) { try SpeakerStatus(from: &reader) }
        let long = SpeakerStatus(
            name: "K", room: "", settings: SpeakerSettings(), playing: false, lastControl: 0,
            trouble: String(repeating: "é", count: 200))
        guard case .speakerStatus(let cut) = try decoded(.speakerStatus(long)) else {
            Issue.record("not a status")
            return
        }
        #expect(cut.trouble.utf8.count <= SpeakerStatus.maxTroubleBytes && cut.trouble.hasPrefix("éé"))
    }

    /// The DJ's list changes with a sync error that comes, goes or moves by a millisecond or more,
    /// not with every heartbeat's few microseconds.
    @Test("the list moves with the sync error by 1 ms steps")
    func syncErrorSteps() {
        #expect(!SpeakerBook.syncErrorMoved(from: nil, to: nil))
        #expect(SpeakerBook.syncErrorMoved(from: nil, to: 0) && SpeakerBook.syncErrorMoved(from: 5, to: nil))
        #expect(!SpeakerBook.syncErrorMoved(from: 100, to: 1099) && !SpeakerBook.syncErrorMoved(from: -400, to: 599))
        #expect(SpeakerBook.syncErrorMoved(from: 100, to: 1100) && SpeakerBook.syncErrorMoved(from: 100, to: -900))
        #expect(SpeakerBook.syncErrorMoved(from: Int32.max, to: Int32.min + 1), "no overflow")
    }

    @Test("volume over 100, a delay beyond ±500 ms, a mute flag over 1, no fields or unknown fields: malformed")
    func outOfRange() throws {
        #expect(throws: Never.self) { try decodeControl(rawControl()) }
        #expect(throws: Never.self) { try decodeControl(rawControl(volume: 100, delay: -500)) }
        for bad in [
            rawControl(volume: 101), rawControl(muted: 2), rawControl(delay: 501), rawControl(delay: -501),
            rawControl(fields: 0), rawControl(fields: 8), rawControl(target: [1, 0]), rawControl(target: [2]),
        ] {
            #expect(throws: WireError.self) { try decodeControl(bad) }
        }
    }

    @Test("both kinds are new: a speaker's status is a guest's kind, a control the DJ's")
    func kinds() {
        #expect(!MessageKind.speakerStatus.isFromDJ)
        #expect(MessageKind.speakerControl.isFromDJ)
    }
}
