import Testing

@testable import PartyRadioCore

/// Bringing a saved station back: the time away, the tracks the DJ has now, new music.
@Suite struct SavedStationTests {
    func track(_ id: String, source: String = "http://old/") -> Track {
        Track(id: id, title: "Title \(id)", artist: "A", album: "", durationMs: 60_000, source: source + id)
    }

    func station(_ ids: [String], index: Int, interlude: String? = nil, positionNs: Int64 = Nanos.seconds(12))
        -> SavedStation
    {
        let queue = ids.map { track($0) }
        let playing = interlude.map { StationEngine.Interlude(queueID: 1, track: track($0), requesterName: "Ann") }
        return SavedStation(
            queue: queue, index: index, interlude: playing, positionNs: positionNs, paused: false, repeatMode: .all,
            volume: 100, votes: VoteBook(trackID: interlude ?? queue[index].id), requests: RequestBook(),
            chat: ChatBook())
    }

    /// Library tracks at new URLs; `gone` IDs are no longer there.
    func remap(gone: Set<String>) -> (Track) -> Track? {
        { gone.contains($0.id) ? nil : self.track($0.id, source: "http://new/") }
    }

    @Test func aShortBreakCarriesOnALongOneResumesWhereItWas() {
        let saved = station(["a", "b"], index: 0)
        #expect(saved.resumed(afterNs: Nanos.seconds(3)).positionNs == Nanos.seconds(15))
        #expect(saved.resumed(afterNs: SavedStation.carryOnLimitNs + 1).positionNs == Nanos.seconds(12))
        #expect(saved.resumed(afterNs: -Nanos.seconds(5)).positionNs == Nanos.seconds(12))  // a clock set back
        var paused = saved
        paused.paused = true
        #expect(paused.resumed(afterNs: Nanos.seconds(3)) == paused)
    }

    @Test func tracksAreMappedAndThePlayingOneKeepsItsPlace() {
        let (mapped, dropped) = station(["a", "b", "c", "d"], index: 2).mappingTracks(remap(gone: ["a"]))
        #expect(dropped.map(\.id) == ["a"])
        #expect(mapped.queue.map(\.id) == ["b", "c", "d"])
        #expect(mapped.queue.allSatisfy { $0.source.hasPrefix("http://new/") })
        #expect(mapped.index == 1 && mapped.positionNs == Nanos.seconds(12))
    }

    @Test func aPlayingTrackThatIsGoneGivesWayToTheNextFromItsStart() {
        let (mapped, dropped) = station(["a", "b", "c"], index: 1).mappingTracks(remap(gone: ["b"]))
        #expect(dropped.map(\.id) == ["b"])
        #expect(mapped.queue[mapped.index].id == "c" && mapped.positionNs == 0)
        #expect(mapped.votes.trackID == "c")
        // The last one gone: the queue wraps to its first.
        let (wrapped, _) = station(["a", "b", "c"], index: 2).mappingTracks(remap(gone: ["c"]))
        #expect(wrapped.index == 0 && wrapped.positionNs == 0)
    }

    @Test func aRequestOnTheAirIsKeptOrGivesWayToTheQueue() {
        let (kept, _) = station(["a", "b", "c"], index: 1, interlude: "x").mappingTracks(remap(gone: ["b"]))
        #expect(kept.interlude?.track.source == "http://new/x" && kept.index == 0 && kept.positionNs > 0)
        let (gone, dropped) = station(["a", "b", "c"], index: 1, interlude: "x").mappingTracks(remap(gone: ["x"]))
        #expect(dropped.map(\.id) == ["x"])
        #expect(gone.interlude == nil && gone.queue[gone.index].id == "c" && gone.positionNs == 0)
    }

    @Test func waitingRequestsAreMappedOrDropped() {
        var saved = station(["a"], index: 0)
        let ann = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
        for (n, id) in ["r1", "r2"].enumerated() {
            _ = saved.requests.admit(
                RequestSend(requestID: UInt64(n + 1), name: "Ann", wanted: .catalogID(id)), from: ann, nowNs: 0)
            _ = saved.requests.resolved(requestID: UInt64(n + 1), from: ann, name: "Ann", track: track(id))
        }
        let (mapped, dropped) = saved.mappingTracks(remap(gone: ["r1"]))
        #expect(dropped.map(\.id) == ["r1"])
        #expect(mapped.requests.waiting.map(\.track.source) == ["http://new/r2"])
        #expect(mapped.requests.outcome(of: 1) == .dropped)
    }

    @Test func newMusicIsAddedAtTheEndOnce() {
        let saved = station(["a", "b"], index: 1)
        let grown = saved.addingNew([track("b"), track("c"), track("a"), track("d"), track("c")])
        #expect(grown.queue.map(\.id) == ["a", "b", "c", "d"])
        #expect(grown.index == 1)
    }
}
