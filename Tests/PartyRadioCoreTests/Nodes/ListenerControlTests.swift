import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// A listener's own controls (the desktop's media keys through MPRIS): a local mute that leaves
/// the station alone, the local volume, and a vote on the playing track resent until the DJ answers.
@Suite struct ListenerControlTests {
    let id = Fixture.stationID

    func tunedIn() -> (ListenerMachine, Peer) {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: true), verifier: ChecksumVerifier())
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        _ = machine.handle(
            station.send(.stateSnapshot(Fixture.snapshot(dj: DJTime(ns: at(ms: 100).ns))), station: id), at: at(ms: 100)
        )
        return (machine, station)
    }

    @Test func muteSetsTheLocalVolumeToZeroAndUnmuteBringsItBack() {
        var (machine, _) = tunedIn()
        let muted = machine.handle(.listenerControl(.mute), at: at(ms: 200))
        #expect(muted.player == [.volume(0)])
        #expect(machine.isMuted)
        #expect(muted.sent.allSatisfy { $0.message.tag == "timePing" })  // the station is not told: it plays on
        #expect(machine.handle(.listenerControl(.mute), at: at(ms: 210)).player.isEmpty)  // already muted
        #expect(machine.handle(.listenerControl(.volume(.to(40))), at: at(ms: 220)).player.isEmpty)  // kept for later
        #expect(machine.volume == 40)
        let toggled = machine.handle(.listenerControl(.toggleMute), at: at(ms: 230))
        #expect(toggled.player == [.volume(40)])
        #expect(!machine.isMuted)
        #expect(machine.handle(.listenerControl(.unmute), at: at(ms: 240)).player.isEmpty)
    }

    @Test func aVoteGoesToTheDJAndIsResentUntilAnswered() {
        var (machine, station) = tunedIn()
        let track = Fixture.tracks[0].id
        let out = machine.handle(.listenerControl(.vote(.down)), at: at(ms: 200))
        #expect(out.sent.map(\.message).contains(.vote(Vote(trackID: track, choice: .down))))
        #expect(out.sent.first?.to == .peer(Fixture.djAddress))
        let wake = machine.nextWakeup
        #expect(wake != nil && wake! <= at(ms: 200) + ListenerMachine.voteRetryNs)
        let again = machine.handle(.timer, at: at(ms: 200) + ListenerMachine.voteRetryNs)
        #expect(again.sent.map(\.message).contains(.vote(Vote(trackID: track, choice: .down))))
        let ack = VoteAck(
            voteSequence: 1, status: .counted, trackID: track, choice: .down, tally: Tally(up: 0, down: 1),
            listenerCount: 1)
        let answered = machine.handle(station.send(.voteAck(ack), station: id), at: at(ms: 500))
        #expect(
            answered.reports.contains {
                if case .notice(let text) = $0 { text.hasPrefix("Voted down on “First”: 0 up, 1 down") } else { false }
            })
        let later = machine.handle(.timer, at: at(ms: 900))
        #expect(!later.sent.map(\.message).contains(.vote(Vote(trackID: track, choice: .down))))
    }

    @Test func nothingToVoteOnBeforeTuningIn() {
        var machine = ListenerMachine(
            configuration: .init(
                query: "Rooftop", timeoutNs: Nanos.seconds(5), interfaceName: "eth0", listenerName: "kitchen",
                playsAudio: true), verifier: ChecksumVerifier())
        _ = machine.handle(.start, at: t0)
        let out = machine.handle(.listenerControl(.vote(.down)), at: at(ms: 10))
        #expect(out.sent.isEmpty)
        #expect(out.reports.contains { if case .warning = $0 { true } else { false } })
    }
}

/// A listener's controls as lines on its stdin, the way `partyradio dj` takes the DJ's.
@Suite struct ListenerControlParsingTests {
    @Test func votesMuteVolumeAndQuit() throws {
        #expect(try ListenerControl.parse(line: "up") == .vote(.up))
        #expect(try ListenerControl.parse(line: " DOWN ") == .vote(.down))
        #expect(try ListenerControl.parse(line: "vote clear") == .vote(.clear))
        #expect(try ListenerControl.parse(line: "mute") == .mute)
        #expect(try ListenerControl.parse(line: "unmute") == .unmute)
        #expect(try ListenerControl.parse(line: "volume 40") == .volume(.to(40)))
        #expect(try ListenerControl.parse(line: "volume +15") == .volume(.by(15)))
        #expect(try ListenerControl.parse(line: "vol -200") == .volume(.by(-100)))
        #expect(try ListenerControl.parse(line: "volume 250") == .volume(.to(100)))
        #expect(try ListenerControl.parse(line: "q") == .quit)
        for control in [
            ListenerControl.mute, .unmute, .toggleMute, .volume(.to(5)), .volume(.by(-5)), .vote(.up), .quit,
        ] {
            #expect(try ListenerControl.parse(line: control.description) == control)
        }
    }

    @Test func aLineItCannotTakeSaysWhatItTakes() {
        for line in ["", "skip", "vote sideways", "volume loud"] {
            #expect(throws: ControlError.self) { try ListenerControl.parse(line: line) }
        }
        do throws(ControlError) {
            _ = try ListenerControl.parse(line: "skip")
        } catch {
            #expect(error.message.contains("up, down, clear"))
        }
    }
}

/// What the listener's own view shows of it: the mute, the volume, and its vote as the DJ counted it.
@Suite struct ListenerSettingsTests {
    @Test func stepsTurnTheVolumeWithinItsRangeAndEachChangeIsReported() {
        var (machine, _) = ListenerControlTests().tunedIn()
        let down = machine.handle(.listenerControl(.volume(.by(-30))), at: at(ms: 200))
        #expect(machine.volume == 70 && down.player == [.volume(70)])
        #expect(down.reports.contains { if case .listenerSettings(let s) = $0 { s.volume == 70 } else { false } })
        _ = machine.handle(.listenerControl(.volume(.by(100))), at: at(ms: 210))
        #expect(machine.volume == 100)
        _ = machine.handle(.listenerControl(.volume(.by(-150))), at: at(ms: 220))
        #expect(machine.volume == 0)
        let muted = machine.handle(.listenerControl(.toggleMute), at: at(ms: 230))
        #expect(muted.reports.contains { if case .listenerSettings(let s) = $0 { s.muted } else { false } })
    }

    @Test func theVoteShownIsTheOneTheDJCountedOnTheTrackPlaying() {
        var (machine, station) = ListenerControlTests().tunedIn()
        let track = Fixture.tracks[0].id
        #expect(machine.settings.vote(on: track) == nil)
        _ = machine.handle(.listenerControl(.vote(.up)), at: at(ms: 200))
        #expect(machine.settings.vote(on: track) == nil)  // sent, not counted yet
        let ack = VoteAck(
            voteSequence: 1, status: .counted, trackID: track, choice: .up, tally: Tally(up: 1, down: 0),
            listenerCount: 1)
        let answered = machine.handle(station.send(.voteAck(ack), station: Fixture.stationID), at: at(ms: 300))
        #expect(machine.settings.vote(on: track) == .up)
        #expect(machine.settings.vote(on: "another track") == nil)
        #expect(answered.reports.contains { if case .listenerSettings(let s) = $0 { s.vote == .up } else { false } })
    }

    @Test func quitStopsTheListener() {
        var (machine, _) = ListenerControlTests().tunedIn()
        let out = machine.handle(.listenerControl(.quit), at: at(ms: 200))
        #expect(machine.isFinished)
        #expect(out.sent.contains { $0.message.tag == "leave" })
    }
}
