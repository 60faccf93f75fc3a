extension LivePlayerChoice {
    /// What every MPRIS player's bus name starts with.
    public static let busPrefix = "org.mpris.MediaPlayer2."

    /// The MPRIS players on the bus this choice may follow, in the order it prefers them, from the
    /// bus's names (`ListNames`). ``named(_:)``: `org.mpris.MediaPlayer2.NAME` itself first, then its
    /// instances (`NAME.instance123`, as playerctl matches them); ``playing``: every player, sorted,
    /// but partyradio's own (a DJ's or listener's player on the same desktop: following one would
    /// follow the station itself) and playerctld (a proxy that only repeats another player).
    /// `own` are names never followed (this DJ's own player's).
    public func candidates(among names: [String], own: Set<String> = []) -> [String] {
        let players = names.filter { $0.hasPrefix(Self.busPrefix) && !own.contains($0) }.sorted()
        switch self {
        case .none: return []
        case .named(let name):
            let exact = Self.busPrefix + name
            return players.filter { $0 == exact } + players.filter { $0.hasPrefix(exact + ".") }
        case .playing:
            return players.filter { name in
                let suffix = name.dropFirst(Self.busPrefix.count)
                return
                    !(suffix == "partyradio" || suffix.hasPrefix("partyradio.") || suffix == "playerctld"
                    || suffix.hasPrefix("playerctld."))
            }
        }
    }

    /// The player to follow among `candidates` (``candidates(among:own:)``'s order), `current` the
    /// one followed now: ``named(_:)`` the first candidate, whatever it does; ``playing`` the
    /// current one while it plays, else the first that plays, else the current one while it is on
    /// the bus (paused, nothing else plays), else none. `isPlaying` asks a player's status (a bus
    /// call, made only when needed).
    public func pick(candidates: [String], current: String?, isPlaying: (String) -> Bool) -> String? {
        switch self {
        case .none: return nil
        case .named: return candidates.first
        case .playing:
            let present = current.flatMap { candidates.contains($0) ? $0 : nil }
            if let present, isPlaying(present) { return present }
            if let playing = candidates.first(where: { $0 != present && isPlaying($0) }) { return playing }
            return present
        }
    }

    /// A player's name as ``LivePlayerState/player`` shows it: its bus name without the prefix.
    public static func shortName(_ busName: String) -> String {
        busName.hasPrefix(busPrefix) ? String(busName.dropFirst(busPrefix.count)) : busName
    }
}
