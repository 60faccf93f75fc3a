extension WebSite {
    /// The QR code of `url` as SVG.
    static func qrSVG(_ url: String) -> String? { nil }
}

/// The web page's URL as a QR code for the DJ's terminal.
public enum WebQRCode {
    public static func terminalLines(_ url: String) -> [String] { [] }
}
