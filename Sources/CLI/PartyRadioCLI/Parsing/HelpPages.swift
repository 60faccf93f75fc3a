/// Every help page: the top-level one and one per command, all in the swift-argument-parser
/// layout (OVERVIEW, USAGE, ARGUMENTS, OPTIONS).
enum HelpPages {
    static let topLevel = """
        OVERVIEW: A peer-to-peer party radio for the local network.

        One machine hosts a station (the DJ); every other machine on the LAN finds it by itself
        through mDNS/DNS-SD, plays along, and votes the track up or down. No server, no accounts.

        USAGE: partyradio <command> [options]

        COMMANDS:
          dj         Host a station (a demo library is generated when you name none).
          stations   List the stations on the local network.
          listen     Tune in to a station and follow what it plays.
          speaker    Play a station headless, as a speaker its DJ sets (volume, mute, delay).
          speakers   List the running DJ's speakers (on the DJ's machine).
          speaker-set Set a speaker's or a room's volume, mute or delay (on the DJ's machine).
          vote       Vote the current track up or down (or clear your vote).
          chat       Say something to the station: the DJ and every listener see it.
          request    Ask the DJ to queue a track (catalog ID, title words or a search term).
          queue      Show what plays next: the guests' requests with their votes, then the DJ's queue.
          stats      The DJ's stats: plays, votes and skips per track, per night.
          search     Search the iTunes catalog (or Apple Music with --apple-music).
          lookup     Look tracks up by catalog ID.
          charts     Show a country's top songs.
          token      Make an Apple Music developer token from your .p8 key.
          doctor     Check avahi, multicast, the firewall, audio, the clock and the catalog here.
          man        Print the manual page partyradio(1).
          completion Print a bash or zsh completion script.

          See 'partyradio <command> --help' for a command's options.

        OPTIONS (every command):
          --state-dir <dir>   Where keys, the catalog cache and the DJ's stats live (default: $XDG_STATE_HOME/partyradio).
          -v, --verbose       Log diagnostics to stderr, one timestamped line each.
          -h, --help          Show help information.
          --version           Print partyradio's version.

        CONFIG: $XDG_CONFIG_HOME/partyradio/config (else ~/.config/partyradio/config) holds defaults,
        one 'key = value' a line: name, library (repeatable), audio-driver, no-audio (true/false),
        guest-name (--as), speaker-name, room, station (the speaker's), interface, port, crowd-skip, country, domain,
        dns-server, dns-key, live, live-frame-ms, live-bitrate, live-repairs, latency, latency-extra,
        live-default-output, live-player. Flags override it.

        JSON output (--json, --json-events) uses snake_case keys everywhere.

        EXIT CODES: 0 success, 1 runtime failure, 2 usage error, 3 station not found or timed out.

        """

    /// The help page of `command`; nil when there is no such command.
    static func page(for command: String) -> HelpText? {
        switch command {
        case "dj": dj
        case "stations": stations
        case "listen": listen
        case "speaker": speaker
        case "speakers": speakers
        case "speaker-set": speakerSet
        case "vote": vote
        case "chat": chat
        case "request": request
        case "queue": queue
        case "stats": stats
        case "search": search
        case "lookup": lookup
        case "charts": charts
        case "token": token
        default: setupPage(for: command)
        }
    }

    static let dj = HelpText(
        overview: "Host a named party station and announce it on the local network.",
        usage: "partyradio dj --name <name> [--library <dir> ...] [--search <term> [--pick <n>]] [--add <id> ...] "
            + "[options]",
        options: [
            ("-n, --name <name>", "The station's name: 1 to 60 characters, at most 63 bytes of UTF-8 (required)."),
            (
                "-l, --library <dir>",
                "Queue the music in this folder; repeat for more. Default: a generated demo library."
            ),
            ("--search <term>", "Queue catalog tracks matching the term (their 30 s previews)."),
            ("--pick <n>", "Queue only result n (or n,m,…) of --search, as numbered by 'partyradio search'."),
            ("--add <id>", "Queue this catalog track ID; repeat or separate with commas."),
            ("--country <cc>", "Catalog storefront (default: from the locale)."),
            ("--no-explicit", "Clean mode: no explicit catalog tracks."),
            ("--json-events", "Print one JSON object per line instead of the live view."),
            ("--port <port>", "UDP port for listeners (default: any free port)."),
            ("--crowd-skip <percent>", "Skip a track once this share of the room votes it down (default: 50; 0: off)."),
            (
                "--requests <mode>",
                "Guests' requests: open (queued at once), approve (they wait for your approval) or off (default: open)."
            ),
            ("--max-requests <n>", "Requests one guest may have waiting at once, 1-100 (default: 3)."),
            (
                "--voters-per-address <n>",
                "Voters counted per machine (default: 1, one guest one vote; raise it for shared machines)."
            ),
            (
                "--vote-weight-after <seconds>",
                "A vote weighs toward crowd skip once its machine has listened (or had the page open) this long "
                    + "(default: 20; 0: at once)."
            ),
            ("--fresh", "Start over: forget the station saved in the state directory (the stats stay)."),
            (
                "--private",
                "Only guests with the join code (shown here, with its QR code) find, hear, vote and chat; "
                    + "everything is encrypted with keys from the code."
            ),
            ("--new-code", "With --private: make a new join code (the old one stops working)."),
            (
                "--live [<source>]",
                "Broadcast live audio instead of a queue: pulse (the default: a sound-server sink named after the "
                    + "station, partyradio_NAME, that any app plays into), pulse:SOURCE (a source there is: "
                    + "pactl list short sources), pipe:PATH[?sampleformat=48000:16:2] (raw PCM, Snapcast's pipe "
                    + "format: mpd's fifo output, librespot, shairport-sync) or - (stdin)."
            ),
            (
                "--live-default-output",
                "With --live pulse: make the station's sink the default output while it runs (restored after)."
            ),
            ("--live-frame-ms <ms>", "With --live: Opus frame length, 2.5, 5, 10 or 20 (default: 10)."),
            ("--live-bitrate <kbit/s>", "With --live: Opus bitrate, 6-510 (default: 128)."),
            (
                "--live-repairs <when>",
                "With --live: when the FEC repairs go out: on-loss (the default: for 10 s after a listener "
                    + "reports lost frames) or always."
            ),
            (
                "--latency <ms>",
                "With --live: the station's delay, from a sample taken in to it heard on every speaker, 20-2000 "
                    + "(default: 60). Every listener plays at it; below about 40 only on a clean link."
            ),
            (
                "--live-player <name>",
                "With --live: the MPRIS player on the session bus whose track is now playing and which skips, "
                    + "pauses and plays move: org.mpris.MediaPlayer2.NAME or an instance of it (mpv, spotify; "
                    + "'playerctl -l' lists them); none: always Live (default: the first player that plays)."
            ),
        ] + PlaybackFlags.help + NetworkOptions.djHelp + CommonOptions.help,
        discussion: """
            CONTROLS:
              On a terminal: n next, p previous, space pause/resume, s shuffle, r repeat, +/- volume,
              a approve the first request waiting for approval, d drop the request at the top, q quit.
              Otherwise one command per line on stdin: next, prev, pause, resume, seek SECONDS, shuffle,
              repeat off|one|all, volume N, search TERM (numbered results with their IDs), add ID [ID…],
              approve N|next, drop N|next (a guest's request, by the number 'up next' shows),
              mute NAME, unmute NAME (chat and requests), quit.
              The live view needs a terminal (not TERM=dumb); NO_COLOR turns its colours off.

            SAVED STATION:
              The DJ saves its queue, position, votes, requests and chat in dj.sqlite in the state
              directory as they change. Started again with the same state directory (after a quit, a
              crash or kill -9) it is the same station where it was; library tracks whose files are
              gone are dropped, music new in the --library folders is added at the end. --fresh
              starts over.

            PRIVATE STATIONS:
              --private prints a join code (65 bits, like K7QX-3MZD-9TRFA) that guests pass with
              --code to listen, vote, chat, request, queue and stations. The code is kept with the
              station key, so a restart keeps it; --new-code replaces it; dj without --private is
              public again. The web page asks for the code too.

            The catalog is $PARTYRADIO_ITUNES_URL (default https://itunes.apple.com).
            """)

    static let stations = HelpText(
        overview: "List the stations on the local network, with what they play and who listens.",
        usage: "partyradio stations [--timeout <seconds>] [--watch] [--json] [options]",
        options: [
            (
                "--timeout <seconds>",
                "Look for at most this long (default: 3; it ends sooner once all answered)."
            ),
            ("-w, --watch", "Keep following stations as they come, change and go."),
            ("--json", "Print JSON (with --watch: one object per line)."),
        ] + NetworkOptions.guestHelp + CommonOptions.help,
        discussion: """
            Datagrams and DNS records left out as bad (forged, malformed, a lapsed --domain lease)
            are counted in one line on stderr.
            """)

    static let listen = HelpText(
        overview: "Tune in to a station and follow what it plays.",
        usage: "partyradio listen [<station>] [--no-audio] [--json-events] [--timeout <seconds>] [options]",
        arguments: [("<station>", "Name, unique name prefix or ID. Default: the only station on the air.")],
        options: [
            ("--json-events", "Print one JSON object per line instead of the live view."),
            ("--timeout <seconds>", "How long to look for the station (default: 10)."),
            ("--as <name>", "Your name in the DJ's listener list, 1-32 characters (default: user@host)."),
            (
                "--trust-new-key",
                "Accept a station that shows another key than the one met before (a DJ with a new key)."
            ),
            (
                "--latency-extra <ms>",
                "A live station: play this much later than the station's delay, 0-1000 (default: 0). More time for "
                    + "frames lost on a bad link to come again, at the price of being behind the other speakers."
            ),
        ] + PlaybackFlags.help + NetworkOptions.guestHelp + CommonOptions.help,
        discussion: """
            CONTROLS:
              On a terminal: u vote up, d vote down, c clear your vote (on the track playing now),
              m mute/unmute this machine (the station plays on), +/- this machine's volume, q quit.
              The view shows your vote once the DJ counted it. Otherwise one command per line on
              stdin: up, down, clear (or vote up|down|clear), mute, unmute, volume N (or +N/-N), quit.

            The live view needs a terminal (not TERM=dumb); NO_COLOR turns its colours off.
            """)

    static let speaker = HelpText(
        overview: "Play a station headless, as one of its speakers: the DJ sets its volume, mute and delay.",
        usage: "partyradio speaker --name <name> [--room <room>] [--station <station>] [--json-events] [options]",
        options: [
            ("-n, --name <name>", "How the DJ lists this speaker, 1-32 characters (required)."),
            ("--room <room>", "The room the DJ can set it with, together with the room's other speakers."),
            (
                "-s, --station <station>",
                "Name, unique name prefix or ID. Default: the one station on the air (it waits while there is none)."
            ),
            ("--json-events", "Print one JSON object per line (speaker_settings, state, ...)."),
            (
                "--trust-new-key",
                "Accept a station that shows another key than the one met before (a DJ with a new key)."
            ),
        ] + PlaybackFlags.help + NetworkOptions.guestHelp + CommonOptions.help,
        discussion: """
            A speaker has no view and takes no keys. It waits for its station, rides out the DJ's
            restarts and goodbyes, and plays again when the station is back. Only the station's DJ
            key sets it (its 'speaker NAME|ROOM volume|mute|delay VALUE' lines); the settings are
            kept in speaker.json in the state directory across restarts. It signs with speaker.key.
            """)

    static let speakers = HelpText(
        overview:
            "List the speakers of the DJ running on this machine: name, room, host, volume, mute, delay, playing.",
        usage: "partyradio speakers [--json] [options]",
        options: [("--json", "Print the list as JSON.")] + CommonOptions.help,
        discussion: """
            Asks the running DJ through its page, with the link it keeps in dj-link.json in its state
            directory (readable by the DJ's user only): run it as that user, with the DJ's
            --state-dir. Exit code 1 when no DJ runs there.
            """)

    static let speakerSet = HelpText(
        overview: "Set a speaker, or every speaker of a room, through the DJ running on this machine.",
        usage: "partyradio speaker-set <name|room> volume <0-100>|mute <on|off>|delay <-500..500> [options]",
        options: CommonOptions.help,
        discussion: """
            The name is matched first (case ignored), then the room. The DJ sends the setting to the
            speakers, signed with the station key, until their status shows it. Exit code 2 for a
            value out of range, 1 when no DJ runs here or no speaker or room has that name.
            """)

    static let vote = HelpText(
        overview: "Vote the track playing now (or a guest's request) up or down, or clear your vote; returns once "
            + "the DJ counted it.",
        usage:
            "partyradio vote up|down|clear [--request <id>] [--station <station>] [--timeout <seconds>] [--json] "
            + "[options]",
        arguments: [("up|down|clear", "Your vote. One per listener per track; voting again changes it.")],
        options: [
            (
                "-s, --station <station>",
                "Name, unique name prefix or ID. Default: the only station on the air."
            ),
            (
                "-r, --request <id>",
                "Vote on this waiting request (numbered as 'partyradio queue' shows) instead of the track playing now."
            ),
            ("--timeout <seconds>", "Give up after this long (default: 10; exit code 3)."),
            ("--json", "Print the result as JSON."),
        ] + NetworkOptions.guestHelp + NetworkOptions.trustHelp + CommonOptions.help)

    static let chat = HelpText(
        overview: "Say something to the station: every listener and the DJ see it; returns once the DJ delivered it.",
        usage:
            "partyradio chat <message>... [--station <station>] [--as <name>] [--timeout <seconds>] [--json] [options]",
        arguments: [("<message>", "1-280 characters of plain text; several words are one line.")],
        options: [
            ("-s, --station <station>", "Name, unique name prefix or ID. Default: the only station on the air."),
            ("--as <name>", "The name shown with your line, 1-32 characters (default: user@host)."),
            ("--timeout <seconds>", "Give up after this long (default: 10; exit code 3)."),
            ("--json", "Print the result as JSON."),
        ] + NetworkOptions.guestHelp + NetworkOptions.trustHelp + CommonOptions.help,
        discussion:
            "The DJ delivers each line once, in order, at most 5 lines per 10 s per guest, and may mute a guest.")

    static let request = HelpText(
        overview: "Ask the DJ to queue a track; returns once the DJ has answered (queued at position N, or refused).",
        usage:
            "partyradio request <query>... [--id | --library | --search] [--pick <n>] [--station <station>] "
            + "[--as <name>] [--json] [options]",
        arguments: [
            (
                "<query>",
                "A catalog track ID (all digits), or words: a title in the DJ's library, else the first playable "
                    + "result of a catalog search made on this machine."
            )
        ],
        options: [
            ("--id", "The query is a catalog track ID."),
            ("--library", "Only the DJ's own library: match the words against its titles and artists."),
            ("--search", "Skip the DJ's library: search the catalog here and request the first playable result."),
            (
                "--pick <n>",
                "Request result n of the catalog search (as 'partyradio search' numbers it); implies --search."
            ),
            ("-s, --station <station>", "Name, unique name prefix or ID. Default: the only station on the air."),
            ("--as <name>", "The name shown with your request, 1-32 characters (default: user@host)."),
            ("--country <cc>", "Catalog storefront for the search (default: from the locale)."),
            ("--no-explicit", "Leave explicit tracks out of the search."),
            ("--timeout <seconds>", "Give up after this long (default: 10; exit code 3)."),
            ("--json", "Print the DJ's answer as JSON."),
        ] + NetworkOptions.guestHelp + NetworkOptions.trustHelp + CommonOptions.help,
        discussion: """
            Requests play between the DJ's own tracks, the most voted first (then the oldest). The DJ
            allows each guest a few waiting requests (dj --max-requests, default 3), may want to approve
            them (dj --requests approve) or take none, and may drop one or mute a guest.

            EXIT CODES: 0 queued (or waiting for the DJ's approval, or already queued: counted as your
            up vote), 1 refused (the reason is on stderr: unknown track, requests off, over the limit,
            muted, …) or a catalog failure, 2 usage error, 3 station not found or no answer in time.
            """)

    static let queue = HelpText(
        overview: "Show what plays next at a station: the guests' requests with who asked and their votes, then "
            + "the DJ's own queue.",
        usage: "partyradio queue [--station <station>] [--timeout <seconds>] [--json] [options]",
        options: [
            ("-s, --station <station>", "Name, unique name prefix or ID. Default: the only station on the air."),
            ("--timeout <seconds>", "Give up after this long (default: 10; exit code 3)."),
            ("--json", "Print the list as JSON."),
        ] + NetworkOptions.guestHelp + NetworkOptions.trustHelp + CommonOptions.help,
        discussion: "Requests are numbered (#N): vote on one with 'partyradio vote up --request N'.")

    static let stats = HelpText(
        overview: "Show the DJ's stats: per track, its plays, votes and skips, and the night's best and worst track.",
        usage: "partyradio stats [--all] [--json] [options]",
        options: [
            ("-a, --all", "Every night (each run of 'partyradio dj'), oldest first. Default: the latest night."),
            ("--json", "Print the result as JSON."),
        ] + CommonOptions.help,
        discussion:
            "The DJ keeps its stats in dj.sqlite in its state directory; run this on the DJ's machine with "
            + "the same --state-dir. Best and worst are by the share of up votes, ties going to the more played.")
}
