/// The pages of the set-up commands (``Command/setupNames``).
extension HelpPages {
    /// The page of a set-up command; nil when `command` is none.
    static func setupPage(for command: String) -> HelpText? {
        switch command {
        case "doctor": doctor
        case "man": man
        case "completion": completion
        default: nil
        }
    }

    static let doctor = HelpText(
        overview: "Check what this machine needs to host or hear a station; each failure says how to fix it.",
        usage:
            "partyradio doctor [--json] [--interface <name>] [--audio-driver <name>] [--live [<source>]] [--speaker] "
            + "[--timeout <seconds>] [options]",
        options: [
            ("--json", "Print the checks as JSON."),
            ("--timeout <seconds>", "How long the multicast self-test and the catalog may take (default: 3)."),
            (
                "--audio-driver <name>",
                "The mpv audio output to try: null, alsa, pulse, pipewire… (default: the first that works)."
            ),
            ("--no-audio", "This machine plays nothing: skip the audio check."),
            (
                "--live [<source>]",
                "Also check that a live station's source opens: pulse (the default), pulse:SOURCE, pipe:PATH or -."
            ),
            (
                "--speaker",
                "Also check that a live station can play here, as a speaker or listener plays one (its sound server)."
            ),
            ("--port <n>", "The station's UDP port the firewall must let in (default: any port from 1024)."),
            ("--itunes-url <url>", "The catalog to try (default: $PARTYRADIO_ITUNES_URL or https://itunes.apple.com)."),
        ] + NetworkOptions.help + CommonOptions.help,
        discussion: """
            CHECKS:
              interface  the network interface is up, has an IPv4 address and can multicast
              avahi      avahi-daemon answers on D-Bus
              multicast  a datagram sent to a test group on the interface (TTL 1, looped back,
                         never beyond the link) comes back
              firewall   the firewall (iptables -S, when readable) lets in mDNS, the stations'
                         multicast groups, UDP and TCP on high ports; a station on the air answers
              audio      mpv opens a sound output and plays a short test tone (the null output
                         fails unless asked for with --audio-driver null)
              clock      this clock against a station's, from 8 time pings (skipped when no
                         station is on the air; fails when it does not answer)
              catalog    the catalog answers a search
              live       with --live: the sound server answers and has the source (pulse,
                         pulse:SOURCE), or the pipe exists and is readable (pipe:PATH)
              live output  with --speaker: the sound server answers and has an output (a live
                         station plays only through PulseAudio or PipeWire; the audio check is
                         libmpv's, for stations of files)
            Exit code 1 if any check fails; a check that cannot apply is skipped, not failed.
            The config file's audio-driver, no-audio, interface and port apply.
            """)

    static let man = HelpText(
        overview: "Print the manual page partyradio(1), in roff, made from these help pages.",
        usage: "partyradio man",
        options: [],
        discussion: "Read it with: partyradio man | man -l -")

    static let completion = HelpText(
        overview: "Print a completion script for bash or zsh (station names are completed from the LAN).",
        usage: "partyradio completion bash|zsh",
        arguments: [("bash|zsh", "The shell to complete in.")],
        options: [],
        discussion: """
            In bash: source <(partyradio completion bash)
            In zsh:  partyradio completion zsh > ~/.zfunc/_partyradio (a folder on your $fpath)
            The Debian package installs both.
            """)

    /// The files partyradio reads and writes (the man page's FILES).
    static let files = """
        $XDG_CONFIG_HOME/partyradio/config (else ~/.config/partyradio/config): defaults, one
        'key = value' a line, # for comments; flags override them. Keys: name, library (repeatable),
        audio-driver, no-audio (true or false), guest-name (what --as sets), speaker-name, room and
        station (a speaker's --name, --room, --station), interface, port,
        crowd-skip, country, domain, dns-server, dns-key, live, live-frame-ms, live-bitrate, live-repairs, live-player,
        latency, latency-extra, live-default-output (true or false). Each applies to the commands that take its option. The station service partyradio-dj.service reads /etc/partyradio/config.

        $XDG_STATE_HOME/partyradio (else ~/.local/state/partyradio), or --state-dir: the keys
        (station.key, listener.key, voter.key, speaker.key), known_stations, a speaker's
        speaker.json, live-drift.json (a live output's sound card drift), the catalog cache and the
        DJ's dj.sqlite.
        """

    /// The environment variables partyradio reads besides its own (the man page's ENVIRONMENT,
    /// before ``EnvironmentKnobs/table``).
    static let environment = """
        XDG_STATE_HOME: where the state directory goes.

        DBUS_SESSION_BUS_ADDRESS: the session bus on which dj and listen offer an MPRIS 2 player
        (the desktop's media controls); unset: none.

        partyradio's own variables follow; an empty one counts as unset.
        """

    /// The commands and their one-line summaries, as the top-level page lists them.
    static var commandSummaries: [(name: String, summary: String)] {
        topLevel.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            let words = line.dropFirst(2)
            guard let space = words.firstIndex(of: " ") else { return nil }
            let name = String(words[..<space])
            guard Command.names.contains(name) || Command.setupNames.contains(name) else { return nil }
            return (name, String(words[space...].drop(while: { $0 == " " })))
        }
    }
}
