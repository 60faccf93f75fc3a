/// The defaults file, `$XDG_CONFIG_HOME/partyradio/config`: `key = value` lines, `#` comments.
/// Each key stands for one option; flags on the command line override it. Pure: the text is
/// parsed here and the file is read by ``ConfigFile/load(environment:)``.
public struct ConfigFile: Equatable, Sendable {
    /// One setting the file may hold.
    struct Key: Sendable {
        /// As written in the file.
        var name: String
        /// The option it stands for, and its other spellings (a flag on the command line overrides).
        var flag: String
        var aliases: [String] = []
        /// The commands that take it.
        var commands: Set<String>
        /// May appear more than once (`library`).
        var repeatable = false
        /// A switch: `true` adds the flag, `false` leaves it out.
        var isSwitch = false
        /// Flags on the command line that replace this setting too: a live station (`--live`) and
        /// a station of files (`--library`, `--search`, `--add`) exclude each other, so the one
        /// the command line asks for wins over the file's other one.
        var yieldsTo: [String] = []
        /// The flag this setting only tunes: without it (on the command line or from the file)
        /// the setting is left out, rather than refused (`live-bitrate` without `live`).
        var tunes: String?
    }

    /// The flags that make a station of files, which a live station refuses.
    private static let queueFlags = ["--library", "-l", "--search", "--add"]

    /// Every key, in the order the help lists them.
    static let keys: [Key] = [
        Key(name: "name", flag: "--name", aliases: ["-n"], commands: ["dj"]),
        Key(
            name: "library", flag: "--library", aliases: ["-l"], commands: ["dj"], repeatable: true,
            yieldsTo: ["--live"]),
        Key(name: "audio-driver", flag: "--audio-driver", commands: ["dj", "listen", "speaker", "doctor"]),
        Key(name: "no-audio", flag: "--no-audio", commands: ["dj", "listen", "speaker", "doctor"], isSwitch: true),
        Key(name: "speaker-name", flag: "--name", aliases: ["-n"], commands: ["speaker"]),
        Key(name: "room", flag: "--room", commands: ["speaker"]),
        Key(name: "station", flag: "--station", aliases: ["-s"], commands: ["speaker"]),
        Key(name: "guest-name", flag: "--as", commands: ["listen", "chat", "request"]),
        Key(
            name: "interface", flag: "--interface",
            commands: ["dj", "stations", "listen", "speaker", "vote", "chat", "request", "queue", "doctor"]),
        Key(name: "port", flag: "--port", commands: ["dj", "doctor"]),
        Key(name: "crowd-skip", flag: "--crowd-skip", commands: ["dj"]),
        Key(name: "country", flag: "--country", commands: ["dj", "search", "lookup", "charts"]),
        Key(name: "domain", flag: "--domain", commands: guests.union(["dj"])),
        Key(name: "dns-server", flag: "--dns-server", commands: guests.union(["dj"])),
        Key(name: "dns-key", flag: "--dns-key", commands: ["dj"]),
        Key(name: "live", flag: "--live", commands: ["dj"], yieldsTo: queueFlags),
        Key(name: "live-frame-ms", flag: "--live-frame-ms", commands: ["dj"], yieldsTo: queueFlags, tunes: "--live"),
        Key(name: "live-bitrate", flag: "--live-bitrate", commands: ["dj"], yieldsTo: queueFlags, tunes: "--live"),
        Key(name: "live-repairs", flag: "--live-repairs", commands: ["dj"], yieldsTo: queueFlags, tunes: "--live"),
        Key(name: "latency", flag: "--latency", commands: ["dj"], yieldsTo: queueFlags, tunes: "--live"),
        Key(name: "latency-extra", flag: "--latency-extra", commands: ["listen"]),
        Key(
            name: "live-default-output", flag: "--live-default-output", commands: ["dj"], isSwitch: true,
            yieldsTo: queueFlags, tunes: "--live"),
        Key(name: "live-player", flag: "--live-player", commands: ["dj"], yieldsTo: queueFlags, tunes: "--live"),
    ]

    /// The guests' networked commands.
    private static let guests: Set<String> = ["stations", "listen", "vote", "chat", "request", "queue"]

    /// A line of the file that is not right.
    public struct Error: Swift.Error, Equatable, Sendable {
        /// `line N: what is wrong`.
        public var message: String
    }

    /// The settings in file order: key name and value.
    public private(set) var settings: [(key: String, value: String)] = []

    public static func == (lhs: ConfigFile, rhs: ConfigFile) -> Bool {
        lhs.settings.map(\.key) == rhs.settings.map(\.key) && lhs.settings.map(\.value) == rhs.settings.map(\.value)
    }

    /// Parses the file's text. Blank lines and lines starting with `#` are skipped; values may
    /// be in double quotes (to keep spaces at their ends).
    public init(parsing text: String) throws(Error) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmed
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = index + 1
            guard let equals = line.firstIndex(of: "=") else {
                throw Error(message: "line \(number): expected 'key = value', got '\(line)'")
            }
            let name = line[..<equals].trimmed
            var value = line[line.index(after: equals)...].trimmed
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard let key = Self.keys.first(where: { $0.name == name }) else {
                let known = Self.keys.map(\.name).joined(separator: ", ")
                throw Error(message: "line \(number): unknown key '\(name)'; the keys are \(known)")
            }
            guard !value.isEmpty else { throw Error(message: "line \(number): '\(name)' has no value") }
            if key.isSwitch && value != "true" && value != "false" {
                throw Error(message: "line \(number): '\(name)' is true or false; got '\(value)'")
            }
            if !key.repeatable && settings.contains(where: { $0.key == name }) {
                throw Error(message: "line \(number): '\(name)' is set twice")
            }
            settings.append((name, value))
        }
    }

    /// The options this file adds to `command`'s `arguments`: each setting the command takes,
    /// unless the command line already sets that option (before any `--`).
    public func arguments(for command: String, given arguments: [String]) -> [String] {
        let given = arguments.prefix { $0 != "--" }
        func gives(_ flag: String, in arguments: some Sequence<String>) -> Bool {
            arguments.contains { $0 == flag || $0.hasPrefix(flag + "=") }
        }
        var added: [String] = []
        for key in Self.keys where key.commands.contains(command) {
            let spellings = [key.flag] + key.aliases + key.yieldsTo
            let overridden = spellings.contains { gives($0, in: given) }
            if overridden { continue }
            if let tuned = key.tunes, !gives(tuned, in: given),
                !settings.contains(where: { $0.key == Self.keys.first { $0.flag == tuned }?.name })
            {
                continue
            }
            for setting in settings where setting.key == key.name {
                if key.isSwitch {
                    if setting.value == "true" { added.append(key.flag) }
                } else {
                    added += [key.flag, setting.value]
                }
            }
        }
        return added
    }
}

extension StringProtocol {
    fileprivate var trimmed: String {
        String(
            drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" })
                .reversed())
    }
}
