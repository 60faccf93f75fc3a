import CQRencode
import Glibc

/// Why a text could not be made into a QR code.
public enum QRCodeError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The text was empty: a QR code of nothing would only puzzle whoever scans it.
    case empty
    /// The text was over `QRCode.maximumBytes` bytes of UTF-8 (or over what the largest QR code
    /// holds): a code that big is too dense for a phone's camera across a room.
    case tooLong(bytes: Int)
    /// The text had a NUL character, which the C encoder would take as its end.
    case containsNUL
    /// libqrencode failed for another reason (its errno: out of memory, invalid input).
    case encoderFailed(errno: Int32)

    public var description: String {
        switch self {
        case .empty:
            return "There is no text to put in a QR code."
        case .tooLong(let bytes):
            return
                "The text is too long for a QR code: \(bytes) bytes of UTF-8, at most \(QRCode.maximumBytes) fit."
        case .containsNUL:
            return "The text has a NUL character, which cannot go in a QR code."
        case .encoderFailed(let code):
            return "libqrencode could not make the QR code: \(String(cString: strerror(code)))."
        }
    }
}

/// A QR code of a text (the web page's URL), made by libqrencode: Debian's well-kept encoder,
/// rather than our own Reed–Solomon and mask selection. The modules are copied out of the C
/// struct, so a `QRCode` is a plain value that any thread may render. libqrencode guards its
/// shared tables with a mutex (Debian builds it with pthreads), so codes may be made on any
/// thread too.
///
/// The text goes in as 8-bit bytes (UTF-8, case kept) at error correction level M (15 % of the
/// code may be lost, enough for a screen photographed at an angle) in the smallest version that
/// holds it, so the modules stay as large as they can on a phone's camera.
public struct QRCode: Sendable, Equatable {
    /// The most UTF-8 bytes a text may have. A version 40 code at level M holds 2331; a URL with
    /// a token is a hundred or so, and anything near this limit would be too dense to scan.
    public static let maximumBytes = 2000

    /// Modules (the code's squares) per side, without the quiet zone: 21 + 4 × (version − 1).
    public let size: Int
    /// The QR version libqrencode chose (1…40): the smallest that holds the text.
    public let version: Int
    /// `size × size` modules, row by row from the top left; true is dark.
    private let modules: [Bool]

    /// Encodes `text` (UTF-8, 8-bit mode, case-sensitive, error correction level M, smallest
    /// version).
    public init(text: String) throws(QRCodeError) {
        let bytes = text.utf8.count
        guard bytes > 0 else { throw .empty }
        guard bytes <= Self.maximumBytes else { throw .tooLong(bytes: bytes) }
        guard !text.utf8.contains(0) else { throw .containsNUL }
        let encoded = text.withCString { QRcode_encodeString($0, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }
        guard let encoded else {
            let code = errno
            throw code == ERANGE ? .tooLong(bytes: bytes) : .encoderFailed(errno: code)
        }
        defer { QRcode_free(encoded) }
        let width = Int(encoded.pointee.width)
        let data = encoded.pointee.data!
        // Bit 0 of each byte is the module's colour; the other bits say what the module is for.
        modules = (0..<width * width).map { data[$0] & 1 == 1 }
        size = width
        version = Int(encoded.pointee.version)
    }

    /// Whether the module at column `x`, row `y` (from the top left) is dark. Outside the code
    /// it is light, as the quiet zone around a code must be.
    public func isDark(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// The code as lines of text for a terminal, two module rows to a line with the half blocks
    /// " ", "▀", "▄" and "█", inside a quiet zone of `quietZone` modules (a scanner wants 4; most
    /// read 2, and a terminal has little room).
    ///
    /// The LIGHT modules are drawn, the dark ones are spaces: most terminals are light text on a
    /// dark background, so the drawn blocks come out light and the background shows dark, which
    /// is the code the right way round. On a light terminal use `terminalLines(quietZone:invert:)`
    /// with `invert: true`.
    public func terminalLines(quietZone: Int = 2) -> [String] {
        terminalLines(quietZone: quietZone, invert: false)
    }

    /// The code as lines of text for a terminal (see `terminalLines(quietZone:)`). With `invert`
    /// false the light modules are drawn (for light text on a dark background, the usual
    /// terminal); with `invert` true the dark ones are (for dark text on a light background).
    /// When the rows are odd in number, the last line's lower half is left as background, which
    /// is below the quiet zone.
    public func terminalLines(quietZone: Int = 2, invert: Bool) -> [String] {
        let quiet = max(0, quietZone)
        let span = size + 2 * quiet
        func drawn(_ x: Int, _ y: Int) -> Bool {
            guard y < span else { return false }  // below the last row: the terminal's background
            return isDark(x: x - quiet, y: y - quiet) == invert
        }
        return stride(from: 0, to: span, by: 2).map { top in
            String(
                (0..<span).map { x -> Character in
                    switch (drawn(x, top), drawn(x, top + 1)) {
                    case (false, false): " "
                    case (true, false): "▀"
                    case (false, true): "▄"
                    case (true, true): "█"
                    }
                })
        }
    }

    /// The code as a compact SVG document: a white background and one black `<path>` made of the
    /// dark modules, each horizontal run of them one rectangle. `moduleSize` is the side of a
    /// module in pixels (width and height of the image; the view box is in modules, so the image
    /// scales sharply), `quietZone` the light margin in modules (4, as the standard asks).
    /// `shape-rendering="crispEdges"` keeps a browser from blurring the edges between modules.
    public func svg(moduleSize: Int = 8, quietZone: Int = 4) -> String {
        let quiet = max(0, quietZone)
        let span = size + 2 * quiet
        let pixels = span * max(1, moduleSize)
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, isDark(x: x, y: y) { x += 1 }
                let run = x - start
                path += "M\(start + quiet) \(y + quiet)h\(run)v1h-\(run)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(span) \(span)" shape-rendering="crispEdges">\
            <rect width="\(span)" height="\(span)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/></svg>
            """
    }
}
