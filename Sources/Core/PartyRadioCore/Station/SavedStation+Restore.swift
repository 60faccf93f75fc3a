/// How a saved station is brought back by a DJ that starts again: moved on by the time it was
/// off the air, its tracks matched with the music the DJ has now, new music added.
extension SavedStation {
    /// A DJ back within this long carries on as if it had played on: its listeners kept playing
    /// meanwhile, so nobody hears a jump. After a longer break it starts where it was saved.
    public static let carryOnLimitNs = Nanos.seconds(60)

    /// The station after `gapNs` off the air (from the save to the restart): a playing station
    /// moves on by the gap if it is at most ``carryOnLimitNs`` (past the end of the track, the
    /// DJ's first tick moves to the next); a paused one, or one away for longer, stays where it was.
    public func resumed(afterNs gapNs: Int64) -> SavedStation {
        guard !paused, gapNs > 0, gapNs <= Self.carryOnLimitNs else { return self }
        var station = self
        station.positionNs = positionNs + gapNs
        return station
    }

    /// The station with every track — the queue, the request on the air, the requests waiting —
    /// passed through `transform`, which gives the track as the DJ has it now (a new source URL)
    /// or nil when it is gone. The station keeps playing the same track where it was if that
    /// track is still there; else it starts the next one that is. Returns the tracks dropped.
    public func mappingTracks(_ transform: (Track) -> Track?) -> (station: SavedStation, dropped: [Track]) {
        var station = self
        var dropped: [Track] = []
        var kept: [Bool] = []
        station.queue = []
        for track in queue {
            if let now = transform(track) {
                station.queue.append(now)
                kept.append(true)
            } else {
                dropped.append(track)
                kept.append(false)
            }
        }
        /// Surviving tracks before old position `i`.
        func survivorsBefore(_ i: Int) -> Int { kept.prefix(max(0, i)).count { $0 } }
        let count = station.queue.count
        let indexKept = queue.indices.contains(index) && kept[index]
        var restart = false
        if let playing = interlude {
            if let now = transform(playing.track) {
                station.interlude?.track = now
                station.index = indexKept ? survivorsBefore(index) : max(0, survivorsBefore(index) - 1)
            } else {
                dropped.append(playing.track)
                station.interlude = nil
                station.index = survivorsBefore(index + 1)
                restart = true
            }
        } else {
            station.index = survivorsBefore(index)
            restart = !indexKept
        }
        if station.index >= count { station.index = 0 }
        if restart {
            station.positionNs = 0
            station.votes = VoteBook(
                trackID: station.interlude?.track.id ?? (count > 0 ? station.queue[station.index].id : nil))
        }
        dropped += station.requests.mapTracks(transform).map(\.track)
        return (station, dropped)
    }

    /// `tracks` not in the queue yet (by ID) added at its end: music the DJ has now that it did
    /// not have when the station was saved.
    public func addingNew(_ tracks: [Track]) -> SavedStation {
        var station = self
        var known = Set(queue.map(\.id))
        for track in tracks where known.insert(track.id).inserted { station.queue.append(track) }
        return station
    }
}
