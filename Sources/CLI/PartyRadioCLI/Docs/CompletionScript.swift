/// The bash and zsh completion scripts, made from ``HelpPages`` like the man page: every command
/// and every option `--help` shows. Folders, files and interfaces are completed where an option
/// takes one, and station names (for `listen`, `--station`) by asking the LAN with a short
/// `partyradio stations --json`.
enum CompletionScript {
    static func render(for shell: Command.Shell) -> String {
        switch shell {
        case .bash: bash
        case .zsh: zsh
        }
    }

    /// Each command with its options.
    private static var commands: [(name: String, summary: String, options: [HelpOption])] {
        HelpPages.commandSummaries.map { name, summary in
            (name, summary, HelpPages.page(for: name).map(HelpOption.all(of:)) ?? [])
        }
    }

    /// The station names on the LAN, one a line: stations answer within about a second. The
    /// `"id":…,"name":…` pairs are the stations (listeners' entries have no id).
    private static let stationNames =
        #"partyradio stations --timeout 1 --json 2>/dev/null | grep -o '"id":"[0-9a-f]*","name":"[^"]*"' "#
        + #"| sed 's/.*"name":"//; s/"$//'"#

    static var bash: String {
        var lines = [
            "# bash completion for partyradio (made by 'partyradio completion bash')",
            "_partyradio_stations() {",
            "    local IFS=$'\\n'",
            "    COMPREPLY=($(compgen -W \"$(\(stationNames))\" -- \"$cur\"))",
            "}",
            "_partyradio() {",
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts",
            "    if [[ $COMP_CWORD -eq 1 ]]; then",
            "        COMPREPLY=($(compgen -W \"\(commands.map(\.name).joined(separator: " ")) --help --version\" -- \"$cur\"))",
            "        return",
            "    fi",
            "    case $prev in",
        ]
        let all = commands.flatMap(\.options)
        func flags(_ predicate: (HelpOption) -> Bool) -> String {
            Set(all.filter(predicate).flatMap(\.flags)).sorted().joined(separator: "|")
        }
        lines += [
            "        \(flags(\.takesDirectory))) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;",
            "        \(flags(\.takesFile))) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;",
            "        \(flags(\.takesStation))) _partyradio_stations; return ;;",
            "        \(flags(\.takesInterface))) COMPREPLY=($(compgen -W \"$(ls /sys/class/net)\" -- \"$cur\")); return ;;",
            "        \(flags { $0.value != nil && !$0.takesDirectory && !$0.takesFile && !$0.takesStation && !$0.takesInterface })) return ;;",
            "    esac",
            "    case ${COMP_WORDS[1]} in",
        ]
        for command in commands {
            let words = command.options.flatMap(\.flags) + ["--version"]
            lines.append("        \(command.name)) opts=\"\(words.joined(separator: " "))\" ;;")
        }
        lines += [
            "        *) return ;;",
            "    esac",
            "    if [[ $cur != -* ]]; then",
            "        case ${COMP_WORDS[1]} in",
            "            listen) _partyradio_stations; return ;;",
            "            vote) COMPREPLY=($(compgen -W \"up down clear\" -- \"$cur\")); return ;;",
            "            completion) COMPREPLY=($(compgen -W \"\(Command.Shell.allCases.map(\.rawValue).joined(separator: " "))\" -- \"$cur\")); return ;;",
            "        esac",
            "    fi",
            "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))",
            "}",
            "complete -F _partyradio partyradio",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    static var zsh: String {
        var lines = [
            "#compdef partyradio",
            "# zsh completion for partyradio (made by 'partyradio completion zsh')",
            "_partyradio_stations() {",
            "  local -a names",
            "  names=(${(f)\"$(\(stationNames))\"})",
            "  compadd -a names",
            "}",
            "_partyradio() {",
            "  local -a commands",
            "  commands=(",
        ]
        lines += commands.map { "    \(quote("\($0.name):\($0.summary)"))" }
        lines += [
            "  )",
            "  if (( CURRENT == 2 )); then",
            "    _describe 'command' commands",
            "    return",
            "  fi",
            "  case $words[2] in",
        ]
        for command in commands {
            var specs = command.options.flatMap { option in
                option.flags.map { flag in
                    var spec = "\(flag)[\(bracketed(option.text))]"
                    if let value = option.value {
                        let action =
                            option.takesDirectory
                            ? "_files -/"
                            : option.takesFile
                                ? "_files"
                                : option.takesStation
                                    ? "_partyradio_stations" : option.takesInterface ? "_net_interfaces" : " "
                        spec += ":\(value):\(action)"
                    }
                    return quote(spec)
                }
            }
            specs.append(quote("--version[Print partyradio's version.]"))
            switch command.name {
            case "listen": specs.append(quote("1:station:_partyradio_stations"))
            case "vote": specs.append(quote("1:vote:(up down clear)"))
            case "completion": specs.append(quote("1:shell:(bash zsh)"))
            default: specs.append(quote("*:argument: "))
            }
            lines.append("    \(command.name)) _arguments -s \\")
            lines += specs.dropLast().map { "      \($0) \\" }
            lines += ["      \(specs.last!) ;;"]
        }
        lines += ["  esac", "}", "_partyradio \"$@\""]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` in single quotes for the shell.
    private static func quote(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// An option's description inside `_arguments`' brackets, where `[`, `]` and `:` are special.
    private static func bracketed(_ text: String) -> String {
        var out = ""
        for character in text {
            if "[]:\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
