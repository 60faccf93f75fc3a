import PartyRadioCore
import PartyRadioMPRIS

/// What the desktop's media controls see of a node: made on the node's thread after a step that
/// reported something (pure data).
struct MPRISView: Equatable, Sendable {
    enum Role: Sendable { case dj, listener }
    var role: Role
    /// The track on the air (nil: none, or not tuned in yet).
    var track: Track?
    var stationPaused = false
    /// A listener's local mute (its pause button).
    var muted = false
    /// The station position when the view was made.
    var positionNs: Int64 = 0
    /// The local volume, 0–100.
    var volume = 100
    /// `http://HOST:PORT` of the DJ's web page when it serves catalog artwork (`/art/ID`).
    var artBase: String?
    /// Counts the position's jumps (seeks): each new value is a `Seeked` signal.
    var seeks = 0
}

/// The pure part of MPRIS: properties from a view, and method calls to the node's controls.
enum MPRISMapping {
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
    static let trackPrefix = "/org/partyradio/track/"

    /// A D-Bus object path for a track ID: a path element may only hold `[A-Za-z0-9_]`, so every
    /// other byte (and `_` itself) becomes `_` and two hex digits (as sd-bus escapes labels).
    static func objectPath(trackID: String) -> String {
        guard !trackID.isEmpty else { return trackPrefix + "_" }
        var path = trackPrefix
        for byte in trackID.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                path.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789abcdef".unicodeScalars)
                path.unicodeScalars.append("_")
                path.unicodeScalars.append(hex[Int(byte >> 4)])
                path.unicodeScalars.append(hex[Int(byte & 0xf)])
            }
        }
        return path
    }

    /// `Playing`, `Paused` (the station paused, or a listener muted) or `Stopped` (nothing on).
    static func playbackStatus(_ view: MPRISView) -> String {
        guard view.track != nil else { return "Stopped" }
        return view.stationPaused || view.muted ? "Paused" : "Playing"
    }

    /// The xesam/mpris metadata of the track on the air.
    static func metadata(_ view: MPRISView) -> [String: DBusValue] {
        guard let track = view.track else { return ["mpris:trackid": .objectPath(noTrack)] }
        var metadata: [String: DBusValue] = [
            "mpris:trackid": .objectPath(objectPath(trackID: track.id)),
            "xesam:title": .string(track.title),
            "xesam:artist": .strings(track.artist.isEmpty ? [] : [track.artist]),
            "xesam:album": .string(track.album),
        ]
        if track.durationMs > 0 { metadata["mpris:length"] = .int64(Int64(track.durationMs) * 1000) }
        // Catalog tracks only: the DJ's page has their artwork (library tracks have none there).
        if let base = view.artBase, !track.id.hasPrefix(DJNode.localPrefix) {
            metadata["mpris:artUrl"] = .string(base + "/art/" + (track.id.addingPercentEncodingForPath()))
        }
        return metadata
    }

    static func properties(_ view: MPRISView) -> MPRISProperties {
        let dj = view.role == .dj
        let lengthUs = Int64(view.track?.durationMs ?? 0) * 1000
        return MPRISProperties(
            root: [
                "Identity": .string("partyradio"), "CanQuit": .bool(false), "CanRaise": .bool(false),
                "HasTrackList": .bool(false), "SupportedUriSchemes": .strings([]), "SupportedMimeTypes": .strings([]),
            ],
            player: [
                "PlaybackStatus": .string(playbackStatus(view)), "Rate": .double(1), "MinimumRate": .double(1),
                "MaximumRate": .double(1), "Metadata": .dictionary(metadata(view)),
                "Volume": .double(view.muted ? 0 : Double(view.volume) / 100), "CanGoNext": .bool(true),
                "CanGoPrevious": .bool(dj), "CanPlay": .bool(true), "CanPause": .bool(true), "CanSeek": .bool(dj),
                "CanControl": .bool(true),
            ],
            positionUs: view.positionNs / 1000, moving: view.track != nil && !view.stationPaused, lengthUs: lengthUs,
            seeks: view.seeks)
    }

    /// A control for the DJ's machine or a listener's.
    enum Control: Hashable, Sendable, CustomStringConvertible {
        case dj(DJControl)
        case listener(ListenerControl)

        var input: NodeInput {
            switch self {
            case .dj(let control): .djControl(control)
            case .listener(let control): .listenerControl(control)
            }
        }

        var description: String {
            switch self {
            case .dj(let control): control.description
            case .listener(let control): control.description
            }
        }
    }

    /// The control a method call stands for (the DJ's controls; a listener's own), or nil when it
    /// does nothing here. `positionUs` is where the station is now (for `Seek`).
    static func control(_ call: MPRISCall, view: MPRISView, positionUs: Int64) -> Control? {
        switch (view.role, call) {
        case (.dj, .playPause): .dj(.toggle)
        case (.dj, .play): .dj(.resume)
        case (.dj, .pause), (.dj, .stop): .dj(.pause)
        case (.dj, .next): .dj(.next)
        case (.dj, .previous): .dj(.previous)
        case (.dj, .seek(let offsetUs)):
            seek(toUs: positionUs.addingReportingOverflow(offsetUs).overflow ? .max : positionUs + offsetUs)
        case (.dj, .setPosition(let path, let targetUs)):
            // MPRIS: ignored unless it names the track playing, or points outside it.
            view.track.map { objectPath(trackID: $0.id) } == path
                && (view.track.map { targetUs <= Int64($0.durationMs) * 1000 || $0.durationMs == 0 } ?? false)
                ? seek(toUs: targetUs) : nil
        case (.listener, .playPause): .listener(.toggleMute)
        case (.listener, .play): .listener(.unmute)
        case (.listener, .pause), (.listener, .stop): .listener(.mute)
        case (.listener, .next): .listener(.vote(.down))
        case (let role, .setVolume(let level)) where level.isFinite:
            volume(Int((min(1, max(0, level)) * 100).rounded()), role: role)
        default: nil
        }
    }

    /// A seek to `positionUs` (before the start: to the start); nil past ``DJControl/seekLimitSeconds``,
    /// as for a typed `seek`.
    private static func seek(toUs positionUs: Int64) -> Control? {
        guard positionUs < Int64(DJControl.seekLimitSeconds * 1e6) else { return nil }
        return .dj(.seek(toNs: max(0, positionUs) * 1000))
    }

    private static func volume(_ level: Int, role: MPRISView.Role) -> Control {
        role == .dj ? .dj(.volume(.to(level))) : .listener(.volume(.to(level)))
    }
}

extension String {
    /// Percent-encoding for one path segment (`/art/ID`): catalog IDs are digits, but a track ID
    /// is the station's word, not ours.
    fileprivate func addingPercentEncodingForPath() -> String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
