import Testing

@testable import PartyRadioCore

/// The DJ's lines on stdin: each command and its short forms, the arguments' limits, and the
/// sentence the DJ reads for a line that is not a command.
@Suite struct DJControlTests {
    func parse(_ line: String) -> DJControl? { try? DJControl.parse(line: line) }

    func refusal(_ line: String) -> String? {
        do throws(ControlError) {
            _ = try DJControl.parse(line: line)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func everyCommandAndItsShortForms() {
        #expect(["next", "n", "skip", "NEXT", "  next  "].map(parse) == Array(repeating: .next, count: 5))
        #expect(["prev", "previous", "p", "back"].map(parse) == Array(repeating: .previous, count: 4))
        #expect(parse("pause") == .pause && parse("resume") == .resume && parse("play") == .resume)
        #expect(parse("toggle") == .toggle && parse("shuffle") == .shuffle)
        #expect(parse("repeat") == .setRepeat(nil) && parse("repeat ONE") == .setRepeat(.one))
        #expect(parse("repeat off") == .setRepeat(.off) && parse("repeat all") == .setRepeat(.all))
        #expect(parse("volume 80") == .volume(.to(80)) && parse("vol 0") == .volume(.to(0)))
        #expect(parse("volume +10") == .volume(.by(10)) && parse("volume -10") == .volume(.by(-10)))
        #expect(parse("seek 42") == .seek(toNs: 42_000_000_000) && parse("seek 2.5") == .seek(toNs: 2_500_000_000))
        #expect(parse("seek -3") == .seek(toNs: -3_000_000_000))
        #expect(parse("search daft punk") == .search("daft punk"))
        #expect(parse("add 1 2,3") == .add(["1", "2", "3"]) && parse("add 1440857781") == .add(["1440857781"]))
        #expect(parse("mute Bob") == .mute("Bob") && parse("unmute Bob Smith") == .unmute("Bob Smith"))
        #expect(parse("MUTE Bob") == .mute("Bob"), "the verb's case does not matter, the name's does")
        #expect(parse("qr") == .qr(forDJ: false) && parse("qr DJ") == .qr(forDJ: true))
        #expect(parse("crowd-skip 30") == .crowdSkip(percent: 30) && parse("crowdskip 0") == .crowdSkip(percent: 0))
        #expect(parse("approve 3") == .approve(.number(3)) && parse("approve #3") == .approve(.number(3)))
        #expect(parse("approve next") == .approve(.next) && parse("drop NEXT") == .drop(.next))
        #expect(parse("drop #1") == .drop(.number(1)))
        #expect(["quit", "q", "exit"].map(parse) == [.quit, .quit, .quit])
    }

    @Test func theArgumentsLimits() {
        // Volume: a level is held to 0–100, a step to ±100 (an enormous step cannot overflow).
        #expect(parse("volume 150") == .volume(.to(100)) && parse("volume 100") == .volume(.to(100)))
        #expect(parse("volume +9223372036854775807") == .volume(.by(100)))
        #expect(parse("volume -9223372036854775808") == .volume(.by(-100)))
        #expect(parse("volume 9223372036854775808") == nil, "not an Int")
        // Seek: finite and under 10^9 s either way.
        #expect(parse("seek 999999999") == .seek(toNs: 999_999_999_000_000_000))
        #expect(parse("seek 1e9") == nil && parse("seek -1e9") == nil)
        #expect(parse("seek inf") == nil && parse("seek nan") == nil)
        // Crowd skip: 0 to 100 exactly.
        #expect(parse("crowd-skip 100") == .crowdSkip(percent: 100))
        #expect(parse("crowd-skip 101") == nil && parse("crowd-skip -1") == nil)
        // Request numbers: a UInt32.
        #expect(parse("approve 4294967295") == .approve(.number(.max)))
        #expect(parse("approve 4294967296") == nil && parse("drop -1") == nil)
    }

    @Test func aLineThatDoesNotFitSaysWhatWouldHave() {
        #expect(refusal("repeat twice") == "'repeat' takes off, one or all (or nothing, to cycle).")
        #expect(refusal("volume") == "'volume' takes 0 to 100, or +N / -N, e.g. 'volume 80'.")
        #expect(refusal("volume loud") == "'volume' takes 0 to 100, or +N / -N, e.g. 'volume 80'.")
        #expect(refusal("seek x") == "'seek' takes a position in seconds, e.g. 'seek 42'.")
        #expect(refusal("search") == "'search' takes a term, e.g. 'search daft punk'.")
        #expect(refusal("add , ,") == "'add' takes catalog track IDs, e.g. 'add 1440857781'.")
        #expect(refusal("unmute") == "'unmute' takes a guest's name or key fingerprint, e.g. 'unmute Bob'.")
        #expect(
            refusal("crowd-skip lots")
                == "'crowd-skip' takes a share of the room from 0 (off) to 100, e.g. 'crowd-skip 50'.")
        #expect(refusal("approve x") == "'approve' takes a request's number, e.g. 'approve 3', or 'next'.")
        #expect(refusal("drop") == "'drop' takes a request's number, e.g. 'drop 3', or 'next'.")
    }

    @Test func anUnknownCommandListsTheCommands() {
        let list =
            "; use next, prev, pause, resume, seek SECONDS, shuffle, repeat [off|one|all], volume N, search TERM, "
            + "add ID, approve N|next, drop N|next, mute NAME, unmute NAME, crowd-skip PERCENT, "
            + "speaker NAME|ROOM volume|mute|delay VALUE, qr [dj] or quit."
        #expect(refusal("Bogus stuff") == "Unknown command 'bogus'" + list)
        #expect(refusal("   ") == "No command" + list)
    }

    /// What a control prints is a line that parses back to it (the MPRIS log and the web page's
    /// answer show it).
    @Test func aControlsLineParsesBackToIt() {
        let controls: [DJControl] = [
            .next, .previous, .pause, .resume, .toggle, .shuffle, .setRepeat(nil), .setRepeat(.one),
            .volume(.to(40)), .volume(.by(10)), .volume(.by(-10)), .seek(toNs: 2_500_000_000), .seek(toNs: 0),
            .search("daft punk"), .add(["1", "2"]), .mute("Bob"), .unmute("Ann Lee"), .qr(forDJ: true),
            .qr(forDJ: false), .crowdSkip(percent: 0), .approve(.next), .approve(.number(3)), .drop(.number(1)),
            .quit,
        ]
        for control in controls { #expect(parse(control.description) == control, "\(control)") }
    }
}
