import Foundation
import Testing

@testable import PartyRadioHTTP

#if canImport(FoundationXML)
    import FoundationXML  // XMLParser lives here on Linux
#endif

@Suite("QRCode")
struct QRCodeTests {
    static let url = "http://192.168.1.20:8080/"
    static let djURL = "http://192.168.1.20:8080/#dj=0123456789abcdef0123456789abcdef"

    @Test("the size is 21 + 4 × (version − 1), and a short URL takes a small version")
    func sizeFollowsVersion() throws {
        for text in ["a", Self.url, Self.djURL, String(repeating: "x", count: 500)] {
            let code = try QRCode(text: text)
            #expect((1...40).contains(code.version))
            #expect(code.size == 21 + 4 * (code.version - 1))
        }
        #expect(try QRCode(text: "a").size == 21)
        #expect(try QRCode(text: Self.url).version <= 3)
    }

    @Test("the three finder patterns sit in the corners: dark border, light ring, dark 3 × 3 centre")
    func finderPatterns() throws {
        let code = try QRCode(text: Self.djURL)
        let corners = [(0, 0), (code.size - 7, 0), (0, code.size - 7)]
        for (left, top) in corners {
            for dy in 0..<7 {
                for dx in 0..<7 {
                    #expect(
                        code.isDark(x: left + dx, y: top + dy) == Self.finderIsDark(dx, dy),
                        "module (\(left + dx), \(top + dy)) of the finder at (\(left), \(top))")
                }
            }
        }
        // The bottom right corner has none.
        let corner = code.size - 7
        let bottomRight = (0..<49).allSatisfy {
            code.isDark(x: corner + $0 % 7, y: corner + $0 / 7) == Self.finderIsDark($0 % 7, $0 / 7)
        }
        #expect(!bottomRight)
        // Outside the code is the light quiet zone.
        #expect(!code.isDark(x: -1, y: 0) && !code.isDark(x: 0, y: code.size) && !code.isDark(x: code.size, y: 3))
    }

    /// A finder pattern's module (dx, dy from its top left): dark border, light ring, dark 3 × 3 centre.
    static func finderIsDark(_ dx: Int, _ dy: Int) -> Bool { max(abs(dx - 3), abs(dy - 3)) != 2 }

    @Test("a longer URL gives a code at least as large, and the same text always the same code")
    func longerAndDeterministic() throws {
        let short = try QRCode(text: Self.url)
        let long = try QRCode(text: Self.djURL)
        #expect(long.size >= short.size)
        #expect(try QRCode(text: String(repeating: "y", count: 300)).size > short.size)
        #expect(try QRCode(text: Self.djURL) == long)
        #expect(try QRCode(text: Self.url) != long)
        // Case-sensitive and UTF-8: these are different texts, so different codes.
        #expect(try QRCode(text: "http://example.invalid/ABC") != QRCode(text: "http://example.invalid/abc"))
        #expect(throws: Never.self) { try QRCode(text: "Café ☕ 🎶") }
    }

    @Test("terminal lines: two module rows a line, all the same width, light modules drawn by default")
    func terminalLines() throws {
        let code = try QRCode(text: Self.url)
        for quiet in [0, 1, 2, 4] {
            for invert in [false, true] {
                let lines = code.terminalLines(quietZone: quiet, invert: invert)
                #expect(lines.count == (code.size + 2 * quiet + 1) / 2)
                #expect(lines.allSatisfy { $0.count == code.size + 2 * quiet })
                #expect(lines.allSatisfy { $0.allSatisfy { " ▀▄█".contains($0) } })
            }
        }
        #expect(code.terminalLines() == code.terminalLines(quietZone: 2, invert: false))
        // Quiet zone 2: the first line is all light (drawn), the top of the finder then dark (space).
        let lines = code.terminalLines()
        #expect(lines[0].allSatisfy { $0 == "█" })
        #expect(Array(lines[1])[2] == " ")  // the finder's top left module, rows 0 and 1 of the code
        let inverted = code.terminalLines(quietZone: 2, invert: true)
        #expect(inverted[0].allSatisfy { $0 == " " })
        #expect(Array(inverted[1])[2] == "█")
        // Each character is the pair of module rows it stands for.
        for (row, line) in code.terminalLines(quietZone: 0).enumerated() {
            for (x, character) in line.enumerated() {
                let upper = !code.isDark(x: x, y: 2 * row)
                let lower = 2 * row + 1 < code.size && !code.isDark(x: x, y: 2 * row + 1)
                #expect(character == [" ", "▄", "▀", "█"][(upper ? 2 : 0) + (lower ? 1 : 0)])
            }
        }
    }

    @Test("the SVG is well-formed XML with a white background and one path that covers the dark modules")
    func svg() throws {
        let code = try QRCode(text: Self.djURL)
        let svg = code.svg(moduleSize: 8, quietZone: 4)
        let parsed = SVGOutline()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = parsed
        #expect(parser.parse(), "\(parser.parserError.map(String.init(describing:)) ?? "")")
        #expect(parsed.elements == ["svg", "rect", "path"])
        let span = code.size + 8
        #expect(parsed.attributes["svg"]?["width"] == "\(span * 8)")
        #expect(parsed.attributes["svg"]?["height"] == "\(span * 8)")
        #expect(parsed.attributes["svg"]?["viewBox"] == "0 0 \(span) \(span)")
        #expect(parsed.attributes["svg"]?["shape-rendering"] == "crispEdges")
        #expect(parsed.attributes["rect"]?["fill"] == "#fff")
        #expect(parsed.attributes["path"]?["fill"] == "#000")

        // The path's runs, painted on a grid, are exactly the dark modules.
        let path = try #require(parsed.attributes["path"]?["d"])
        var painted = Set<[Int]>()
        let run = /M(\d+) (\d+)h(\d+)v1h-(\d+)z/
        var covered = 0
        for match in path.matches(of: run) {
            let (x, y, length) = (Int(match.1)! - 4, Int(match.2)! - 4, Int(match.3)!)
            #expect(match.3 == match.4)
            for dx in 0..<length { painted.insert([x + dx, y]) }
            covered += match.0.count
        }
        #expect(covered == path.count)
        for y in 0..<code.size {
            for x in 0..<code.size { #expect(painted.contains([x, y]) == code.isDark(x: x, y: y)) }
        }
    }

    @Test("empty text, a NUL and text over 2000 bytes are refused with a sentence")
    func errors() {
        #expect(throws: QRCodeError.empty) { try QRCode(text: "") }
        #expect(throws: QRCodeError.containsNUL) { try QRCode(text: "a\u{0}b") }
        #expect(throws: QRCodeError.tooLong(bytes: 2001)) { try QRCode(text: String(repeating: "x", count: 2001)) }
        // Bytes, not characters: 700 three-byte characters are 2100 bytes.
        #expect(throws: QRCodeError.tooLong(bytes: 2100)) { try QRCode(text: String(repeating: "☕", count: 700)) }
        #expect(throws: Never.self) { try QRCode(text: String(repeating: "x", count: 2000)) }
        #expect(QRCodeError.tooLong(bytes: 2001).description.contains("too long for a QR code"))
        #expect(QRCodeError.empty.description.hasSuffix("."))
    }

    @Test(
        "zbarimg reads back the text (a real decoder; runs where zbar-tools is installed)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg")))
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        for text in [Self.url, Self.djURL, "Café ☕ 🎶 http://example.invalid/ÄbC"] {
            let code = try QRCode(text: text)
            // A binary PGM, 4 pixels a module with the standard quiet zone of 4: ImageMagick reads it.
            let scale = 4
            let side = (code.size + 8) * scale
            var pixels = [UInt8](repeating: 255, count: side * side)
            for y in 0..<side {
                for x in 0..<side where code.isDark(x: x / scale - 4, y: y / scale - 4) { pixels[y * side + x] = 0 }
            }
            let file = directory.file("code.pgm")
            try (Data("P5\n\(side) \(side)\n255\n".utf8) + Data(pixels)).write(to: URL(fileURLWithPath: file))

            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
            process.arguments = ["--quiet", "--raw", "-Sbinary", file]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(String(decoding: data, as: UTF8.self) == text)  // -Sbinary: the bytes, no newline
        }
    }
}

/// The elements of an SVG in document order, and each one's attributes.
private final class SVGOutline: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var attributes: [String: [String: String]] = [:]

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String]
    ) {
        elements.append(elementName)
        self.attributes[elementName] = attributes
    }
}
