/// The page (placeholder until the real page lands).
enum WebPage {
    static let html = #"""
        <!doctype html><html><head><meta charset="utf-8"><title>partyradio</title><style>body{font-family:sans-serif}</style></head>
        <body><h1 id="station"></h1><script>fetch('/api/state').then(r=>r.json()).then(s=>{document.getElementById('station').textContent=s.station})</script></body></html>
        """#
}
