import Foundation

extension ConfigFile {
    /// `$XDG_CONFIG_HOME/partyradio/config`, else `~/.config/partyradio/config` (a relative
    /// `XDG_CONFIG_HOME` is ignored, as the XDG Base Directory spec says).
    public static func path(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("partyradio/config").path
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/partyradio/config").path
    }

    /// The file at ``path(environment:)``; an empty one when there is none.
    /// - Throws: ``Error`` naming the file when it cannot be read or a line is wrong.
    public static func load(environment: [String: String]) throws(Error) -> ConfigFile {
        let path = path(environment: environment)
        guard FileManager.default.fileExists(atPath: path) else { return try ConfigFile(parsing: "") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Error(message: "Cannot read the config file \(path); check its permissions")
        }
        do { return try ConfigFile(parsing: String(decoding: data, as: UTF8.self)) } catch {
            throw Error(message: "In the config file \(path), \(error.message)")
        }
    }
}
