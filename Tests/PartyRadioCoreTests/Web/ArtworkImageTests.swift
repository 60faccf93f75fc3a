import Testing

@testable import PartyRadioCore

/// A live player's artwork before the DJ serves it (docs/LIVE.md): an image by its first bytes, at
/// a file URL of this machine or a web URL, nothing else.
@Suite struct ArtworkImageTests {
    @Test("an image is known by its first bytes: PNG, JPEG, GIF and WebP; anything else is none")
    func kinds() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]
        #expect(ArtworkImage.contentType(of: png) == "image/png")
        #expect(ArtworkImage.contentType(of: [0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(ArtworkImage.contentType(of: Array("GIF89a...".utf8)) == "image/gif")
        #expect(ArtworkImage.contentType(of: Array("GIF87a".utf8)) == "image/gif")
        #expect(ArtworkImage.contentType(of: Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == "image/webp")
        for other in [
            [], Array(png.prefix(7)), Array("root:x:0:0:root:/root:/bin/bash".utf8), Array("RIFF\0\0\0\0WAVE".utf8),
            Array("<svg onload=alert(1)>".utf8), Array("GIF8".utf8), [0xFF, 0xD8],
        ] {
            #expect(ArtworkImage.contentType(of: other) == nil, "\(other)")
        }
    }

    @Test("a URL is a file of this machine (decoded) or a web page; another host's file or scheme is none")
    func locations() {
        #expect(ArtworkImage.location(of: "file:///tmp/a%20b/c+d.png") == .file(path: "/tmp/a b/c+d.png"))
        #expect(ArtworkImage.location(of: "file://localhost/tmp/x.jpg") == .file(path: "/tmp/x.jpg"))
        #expect(ArtworkImage.location(of: "https://i.scdn.co/image/ab67") == .web(url: "https://i.scdn.co/image/ab67"))
        #expect(ArtworkImage.location(of: "http://10.0.0.1/art.png") == .web(url: "http://10.0.0.1/art.png"))
        for bad in [
            "file://otherhost/tmp/x.png", "file:tmp/x.png", "javascript:alert(1)", "data:image/png;base64,AAAA",
            "file:///tmp/%zz.png", "file:///tmp/%00.png", "file:///tmp/%ff%fe.png", "ftp://host/x.png", "",
        ] {
            #expect(ArtworkImage.location(of: bad) == nil, "\(bad)")
        }
    }
}
