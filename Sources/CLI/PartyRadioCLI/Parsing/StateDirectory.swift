import Foundation

/// Where partyradio keeps its keys and catalog cache when `--state-dir` is not given. One rule
/// for every command, so the DJ's key and the catalog cache always land in the same place.
public enum StateDirectory {
    /// `$XDG_STATE_HOME/partyradio`, else `~/.local/state/partyradio`. A relative (or empty)
    /// `XDG_STATE_HOME` is ignored, as the XDG Base Directory spec says; `HOME` comes from
    /// `environment`, and only when it is missing from the user database.
    public static func `default`(environment: [String: String]) -> String {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("partyradio").path
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/partyradio").path
    }

    /// `chosen` (the `--state-dir` value) when given, else ``default(environment:)``.
    public static func resolve(_ chosen: String?, environment: [String: String]) -> String {
        chosen ?? self.default(environment: environment)
    }
}
