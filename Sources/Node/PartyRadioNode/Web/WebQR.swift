import PartyRadioHTTP

extension WebSite {
    /// The QR code of `url` as SVG (`/qr.svg`).
    static func qrSVG(_ url: String) -> String? { try? QRCode(text: url).svg() }
}

/// The web page's URL as a QR code for the DJ's terminal: light modules drawn, for the usual
/// dark terminal background (empty if the URL cannot be encoded).
public enum WebQRCode {
    public static func terminalLines(_ url: String) -> [String] {
        (try? QRCode(text: url).terminalLines()) ?? []
    }
}
