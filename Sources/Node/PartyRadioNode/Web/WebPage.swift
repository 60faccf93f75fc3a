// The guests' web page (docs/WEB.md). It is written as a page of its own, Web/Page/index.html with
// page.css and page.js beside it, so that it can be read, opened in a browser and checked as it is,
// and it is embedded in the binary when it is built (Package.swift): nothing is read from disk at
// run time. The DJ serves it as one HTML document whose only <style> and only <script> carry no
// attributes, so the server can allow exactly them by hash in its Content-Security-Policy. Every
// word that comes from the station (titles, names, chat) goes in with textContent; no inline
// handlers, no style attributes, nothing from outside the DJ.
enum WebPage {
    /// The page as served: index.html with page.css and page.js put inline where it links them.
    static let html = inline(
        page: String(decoding: PackageResources.index_html, as: UTF8.self),
        style: String(decoding: PackageResources.page_css, as: UTF8.self),
        script: String(decoding: PackageResources.page_js, as: UTF8.self))

    /// The page's script as written (for the check that it parses).
    static var script: String { String(decoding: PackageResources.page_js, as: UTF8.self) }

    /// How index.html links its style and script; each link is replaced by the file's text.
    static let styleLink = #"<link rel="stylesheet" href="page.css">"#
    static let scriptLink = #"<script src="page.js"></script>"#

    static func inline(page: String, style: String, script: String) -> String {
        page.replacing(styleLink, with: "<style>\n" + style + "</style>")
            .replacing(scriptLink, with: "<script>\n" + script + "</script>")
    }
}
