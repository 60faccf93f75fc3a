#!/usr/bin/env python3
"""A fixture server shaped like Apple's catalog endpoints, for partyradio's catalog tests.

Binds 127.0.0.1 only (another address only with --previews, below), on the port given (0: any free one), prints
"PORT <n>" on stdout, and exits when its stdin closes, so it never outlives the test process.

Routes (as Apple serves them):
  /search?term=…            iTunes Search API; special terms below trigger failures
  /lookup?id=1,2            iTunes Lookup API
  /{cc}/rss/topsongs/limit=N/json   classic iTunes RSS feed (JSON)
  /v1/catalog/{sf}/search   Apple Music API (needs Authorization: Bearer <JWT>)
  /v1/catalog/{sf}/songs?ids=…      Apple Music API songs
  /v1/catalog/{sf}/playlists/{id}   Apple Music API playlist with tracks
  /_count?term=X            how many /search requests carried term X (cache tests)
  /image/thumb/…            artwork: a small JPEG (as is1-ssl.mzstatic.com serves them)

With --local-artwork, artwork URLs in every answer point at this server's /image/thumb/ instead
of is1-ssl.mzstatic.com, so a test without the internet can fetch them.

With --previews ADDR (only ever a test namespace's own LAN address, for listeners on other hosts
of the testbed), the server binds ADDR instead of 127.0.0.1, preview URLs in every answer point
at it (http://ADDR:PORT/itunes-assets/… instead of https://audio-ssl.itunes.apple.com/…), and it
serves each preview as Apple's CDN does: GET and HEAD, Accept-Ranges, single byte ranges (206 +
Content-Range, 416 past the end). The audio is a 30-second tone per path (WAV, 22.05 kHz mono,
about 1.3 MB; Apple's are AAC in M4A, which the player probes the same way).
  /_previews                every preview path asked for, with how many requests and the first's
                            time (CLOCK_REALTIME ns), as JSON
With --preview-rate BYTES, each preview answer's body goes out at BYTES a second at most (a slow
CDN: a listener's cache is still fetching while it plays). With --preview-break-at OFFSET, a range
starting at or past OFFSET is answered after 2 s with a Content-Range one byte longer than the
file, as if it had changed: the download fails part way.

Special search terms: empty, big (200 results), unicode, echo… (title = raw query),
useragent, gzip, redirect, forbidden (403), ratelimited (429, Retry-After 120),
flaky429-N (429 with Retry-After 0 for the first N requests), servererror (500 HTML),
html (200 HTML page), slow (answers after 3 s), veryslow (10 s), stall (120 s), truncated (Content-Length longer than the
body), cutoff (body cut mid-JSON, connection closed), malformed, notfound (404).
"""
import array
import gzip
import json
import math
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog")
COUNTS = {}
LOCK = threading.Lock()


def fixture(name):
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def big_results(n):
    results = []
    for i in range(n):
        track = {
            "wrapperType": "track", "kind": "song", "artistId": 1000 + i,
            "collectionId": 2000 + i, "trackId": 3000000 + i if i % 2 else str(3000000 + i),
            "artistName": "Artist %d" % i, "collectionName": "Album %d" % (i // 10),
            "trackName": "Song number %d – ünïcödé" % i,
            "collectionCensoredName": "Album %d" % (i // 10), "trackCensoredName": "Song number %d" % i,
            "artistViewUrl": "https://music.apple.com/us/artist/a/%d?uo=4" % (1000 + i),
            "collectionViewUrl": "https://music.apple.com/us/album/b/%d?i=%d&uo=4" % (2000 + i, 3000000 + i),
            "trackViewUrl": "https://music.apple.com/us/album/b/%d?i=%d&uo=4" % (2000 + i, 3000000 + i),
            "previewUrl": "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview/%d.plus.aac.p.m4a" % i,
            "artworkUrl30": "https://is1-ssl.mzstatic.com/image/thumb/Music/v4/%d.jpg/30x30bb.jpg" % i,
            "artworkUrl60": "https://is1-ssl.mzstatic.com/image/thumb/Music/v4/%d.jpg/60x60bb.jpg" % i,
            "artworkUrl100": "https://is1-ssl.mzstatic.com/image/thumb/Music/v4/%d.jpg/100x100bb.jpg" % i,
            "collectionPrice": 9.99, "trackPrice": 1.29, "releaseDate": "2020-01-01T12:00:00Z",
            "collectionExplicitness": "notExplicit", "trackExplicitness": "notExplicit",
            "discCount": 1, "discNumber": 1, "trackCount": 12, "trackNumber": i % 12 + 1,
            "trackTimeMillis": 180000 + i * 1000, "country": "USA", "currency": "USD",
            "primaryGenreName": "Pop", "isStreamable": True,
        }
        results.append(track)
    return {"resultCount": n, "results": results}


def chart_entry(i, cc):
    base = "https://is1-ssl.mzstatic.com/image/thumb/Music/v4/chart%d.jpg/" % i
    return {
        "im:name": {"label": "Chart Song %d (%s)" % (i + 1, cc)},
        "im:image": [{"label": base + "55x55bb.png", "attributes": {"height": "55"}},
                     {"label": base + "60x60bb.png", "attributes": {"height": "60"}},
                     {"label": base + "170x170bb.png", "attributes": {"height": "170"}}],
        "im:collection": {"im:name": {"label": "Chart Album %d" % (i + 1)}},
        "im:contentType": {"im:contentType": {"attributes": {"term": "Track", "label": "Track"}},
                           "attributes": {"term": "Music", "label": "Music"}},
        "title": {"label": "Chart Song %d - Chart Artist %d" % (i + 1, i + 1)},
        "link": [{"attributes": {"rel": "alternate", "type": "text/html",
                                 "href": "https://music.apple.com/%s/album/x/%d?i=%d&uo=2" % (cc, 5000 + i, 9000 + i)}},
                 {"im:duration": {"label": "30000"},
                  "attributes": {"title": "Preview", "rel": "enclosure", "type": "audio/x-m4a",
                                 "href": "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview/chart%d.m4a" % i,
                                 "im:assetType": "preview"}}],
        "id": {"label": "https://music.apple.com/%s/album/x/%d?i=%d&uo=2" % (cc, 5000 + i, 9000 + i),
               "attributes": {"im:id": str(9000 + i)}},
        "im:artist": {"label": "Chart Artist %d" % (i + 1)},
        "category": {"attributes": {"im:id": "14", "term": "Pop", "label": "Pop"}},
    }


# A 1x1 baseline JPEG.
TINY_JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b0b0c1912"
    "130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c30313434341f27393d38323c2e333432ffc0000b0800"
    "01000101011100ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5100002"
    "010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c11552d1f024"
    "33627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a63646566676869"
    "6a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4"
    "c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda0008010100003f00fbd3"
    "ffd9")
LOCAL_ARTWORK = "--local-artwork" in sys.argv
PREVIEWS = sys.argv[sys.argv.index("--previews") + 1] if "--previews" in sys.argv else None
PREVIEW_RATE = int(sys.argv[sys.argv.index("--preview-rate") + 1]) if "--preview-rate" in sys.argv else None
PREVIEW_BREAK = int(sys.argv[sys.argv.index("--preview-break-at") + 1]) if "--preview-break-at" in sys.argv else None
PREVIEW_HITS = {}
PREVIEW_AUDIO = {}


def preview_audio(path):
    """A 30 s WAV tone for a preview path (its pitch from the path), made once."""
    with LOCK:
        if path in PREVIEW_AUDIO:
            return PREVIEW_AUDIO[path]
    rate, seconds = 22050, 30
    pitch = 220 + sum(path.encode()) % 440
    samples = array.array("h", (int(8000 * math.sin(2 * math.pi * pitch * n / rate)) for n in range(rate * seconds)))
    if sys.byteorder != "little":
        samples.byteswap()
    data = samples.tobytes()
    header = b"RIFF" + (36 + len(data)).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little") + \
        (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + rate.to_bytes(4, "little") + \
        (rate * 2).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little") + \
        b"data" + len(data).to_bytes(4, "little")
    with LOCK:
        PREVIEW_AUDIO[path] = header + data
        return PREVIEW_AUDIO[path]

HTML_ERROR = (b"<!DOCTYPE html><html><head><title>Service Unavailable - Zero size object</title></head>"
              b"<body><h1>Service Unavailable</h1><p>The server is temporarily unable to service your request."
              b"</p></body></html>")

APPLE_401 = {"errors": [{"id": "LOVWE6E5SQIGCPO3H3J6AMOFKA", "title": "Unauthorized",
                         "detail": "Invalid authentication", "status": "401", "code": "40100"}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus delayed ACKs
    # add 40 ms to every kept-alive answer and the benchmark would measure that instead.
    disable_nagle_algorithm = True
    server_version = "AppleFixture/1.0"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json; charset=utf-8", headers=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if LOCAL_ARTWORK and isinstance(body, bytes):
            own = ("http://127.0.0.1:%d/" % self.server.server_address[1]).encode()
            body = body.replace(b"https://is1-ssl.mzstatic.com/", own)
        if PREVIEWS and isinstance(body, bytes):
            own = ("http://%s:%d/" % (PREVIEWS, self.server.server_address[1])).encode()
            body = body.replace(b"https://audio-ssl.itunes.apple.com/", own)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        path = parsed.path
        try:
            if path == "/search":
                return self.search(parsed, query)
            if path == "/lookup":
                return self.lookup(query)
            if path.startswith("/image/thumb/"):
                return self.send(200, TINY_JPEG, "image/jpeg")
            if PREVIEWS and path.startswith("/itunes-assets/"):
                return self.preview(path)
            if path == "/_previews":
                with LOCK:
                    return self.send(200, PREVIEW_HITS)
            if path == "/_count":
                term = query.get("term", [""])[0]
                with LOCK:
                    return self.send(200, {"count": COUNTS.get(term, 0)})
            parts = path.strip("/").split("/")
            if len(parts) == 4 and parts[1] == "rss" and parts[2] == "topsongs" or \
                    len(parts) == 5 and parts[1] == "rss" and parts[2] == "topsongs" and parts[4] == "json":
                return self.topsongs(parts)
            if len(parts) >= 4 and parts[0] == "v1" and parts[1] == "catalog":
                return self.apple_music(parts, query)
            return self.send(404, HTML_ERROR.replace(b"Service Unavailable", b"Not Found"), "text/html")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_HEAD(self):
        path = urllib.parse.urlsplit(self.path).path
        if PREVIEWS and path.startswith("/itunes-assets/"):
            return self.preview(path, head=True)
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def preview(self, path, head=False):
        """A preview as a CDN serves it: the whole file, or one byte range."""
        audio = preview_audio(path)
        size = len(audio)
        with LOCK:
            hit = PREVIEW_HITS.setdefault(path, {"requests": 0, "first_ns": time.time_ns()})
            hit["requests"] += 1
        start, end, status = 0, size - 1, 200
        wanted = self.headers.get("Range", "")
        if wanted.startswith("bytes=") and "," not in wanted:
            first, _, last = wanted[6:].strip().partition("-")
            try:
                if first:
                    start, end = int(first), min(int(last), size - 1) if last else size - 1
                else:
                    start, end = max(0, size - int(last)), size - 1
                status = 206
            except ValueError:
                start, end, status = 0, size - 1, 200
            if status == 206 and (start >= size or start > end):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        claimed = size
        if PREVIEW_BREAK is not None and status == 206 and start >= PREVIEW_BREAK:
            time.sleep(2)
            claimed = size + 1
        self.send_response(status)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, claimed))
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        if head:
            return
        body = audio[start:end + 1]
        if PREVIEW_RATE is None:
            self.wfile.write(body)
            return
        piece = max(1, PREVIEW_RATE // 20)
        for offset in range(0, len(body), piece):
            self.wfile.write(body[offset:offset + piece])
            self.wfile.flush()
            time.sleep(piece / PREVIEW_RATE)

    def search(self, parsed, query):
        term = query.get("term", [""])[0]
        with LOCK:
            COUNTS[term] = COUNTS.get(term, 0) + 1
            count = COUNTS[term]
        country = query.get("country", ["us"])[0]
        if country == "zz":
            return self.send(400, {"errorMessage": "Invalid value(s) for key(s): [country]",
                                   "queryParameters": {"country": "zz"}}, "text/javascript; charset=utf-8")
        if term == "empty":
            return self.send(200, b'{\n "resultCount":0,\n "results": []\n}\n', "text/javascript; charset=utf-8")
        if term == "big":
            return self.send(200, big_results(200), "text/javascript; charset=utf-8")
        if term == "unicode":
            return self.send(200, fixture("search-unicode.json"), "text/javascript; charset=utf-8")
        if term.startswith("echo"):
            return self.send(200, {"resultCount": 1, "results": [
                {"wrapperType": "track", "kind": "song", "trackId": 1, "artistName": "Echo",
                 "trackName": parsed.query, "collectionName": term}]})
        if term == "useragent":
            agent = self.headers.get("User-Agent", "")
            return self.send(200, {"resultCount": 1, "results": [
                {"wrapperType": "track", "kind": "song", "trackId": 2, "artistName": "Agent", "trackName": agent}]})
        if term == "gzip":
            if "gzip" not in self.headers.get("Accept-Encoding", ""):
                return self.send(406, b"gzip required", "text/plain")
            body = gzip.compress(fixture("search-daft-punk.json"))
            return self.send(200, body, "text/javascript; charset=utf-8", {"Content-Encoding": "gzip"})
        if term == "redirect":
            self.send_response(302)
            self.send_header("Location", "/search?term=daft+punk&country=us")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if term == "forbidden":
            return self.send(403, HTML_ERROR.replace(b"Service Unavailable", b"Forbidden"), "text/html")
        if term == "ratelimited":
            return self.send(429, b"", "text/plain", {"Retry-After": "120"})
        if term.startswith("flaky429-"):
            if count <= int(term.split("-")[1]):
                return self.send(429, b"Too Many Requests", "text/plain", {"Retry-After": "0"})
            return self.send(200, fixture("search-daft-punk.json"), "text/javascript; charset=utf-8")
        if term == "servererror":
            return self.send(500, HTML_ERROR.replace(b"Service Unavailable", b"Internal Server Error"), "text/html")
        if term == "html":
            return self.send(200, HTML_ERROR, "text/html; charset=utf-8")
        if term in ("slow", "veryslow", "stall"):
            time.sleep({"slow": 3, "veryslow": 10, "stall": 120}[term])
            return self.send(200, fixture("search-daft-punk.json"), "text/javascript; charset=utf-8")
        if term == "truncated":
            body = fixture("search-daft-punk.json")
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body[:100])
            self.wfile.flush()
            self.close_connection = True
            return
        if term == "cutoff":
            body = fixture("search-daft-punk.json")
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript; charset=utf-8")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if term == "malformed":
            return self.send(200, b'{"resultCount":1,"results":[{"trackId":1,,"trackName":"x"}]}',
                             "text/javascript; charset=utf-8")
        if term == "notfound":
            return self.send(404, HTML_ERROR.replace(b"Service Unavailable", b"Not Found"), "text/html")
        return self.send(200, fixture("search-daft-punk.json"), "text/javascript; charset=utf-8")

    def lookup(self, query):
        ids = [i for i in query.get("id", [""])[0].split(",") if i]
        doc = json.loads(fixture("lookup-tracks.json"))
        known = {str(r.get("trackId", r.get("collectionId", r.get("artistId")))): r for r in doc["results"]}
        # Apple answers in its own order, not the order asked: reverse to prove callers re-sort.
        results = [known[i] for i in reversed(ids) if i in known]
        return self.send(200, {"resultCount": len(results), "results": results}, "text/javascript; charset=utf-8")

    def topsongs(self, parts):
        cc = parts[0]
        limit_part = parts[3] if len(parts) == 5 else ""
        try:
            limit = int(limit_part.split("=")[1])
        except (IndexError, ValueError):
            limit = 10
        if cc == "us" and limit == 4:
            return self.send(200, fixture("topsongs-us.json"), "application/json")
        if cc == "xx":
            return self.send(400, HTML_ERROR.replace(b"Service Unavailable", b"Bad Request"), "text/html")
        entries = [chart_entry(i, cc) for i in range(min(limit, 200))]
        feed = {"feed": {"author": {"name": {"label": "iTunes Store"}},
                         "entry": entries[0] if len(entries) == 1 else entries,
                         "title": {"label": "iTunes Store: Top Songs"},
                         "id": {"label": "https://itunes.apple.com/%s/rss/topsongs/limit=%d/json" % (cc, limit)}}}
        return self.send(200, feed, "application/json")

    def apple_music(self, parts, query):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        segments = token.split(".")
        if len(segments) != 3 or segments[0] == "bad":
            return self.send(401, APPLE_401)
        storefront = parts[2]
        kind = parts[3]
        if kind == "search":
            doc = json.loads(fixture("applemusic-search.json"))
            types = query.get("types", ["songs"])[0].split(",")
            doc["results"] = {k: v for k, v in doc["results"].items() if k in types}
            if self.headers.get("Music-User-Token"):
                doc["results"].setdefault("songs", {"data": []})["data"].insert(0, {
                    "id": "42", "type": "songs", "attributes": {"name": "For You", "artistName": "Personal",
                                                               "previews": [{"url": "https://x/p.m4a"}]}})
            return self.send(200, doc)
        doc = json.loads(fixture("applemusic-search.json"))
        songs = doc["results"]["songs"]["data"][:2]
        if kind == "songs":
            ids = query.get("ids", [""])[0].split(",")
            return self.send(200, {"data": [s for s in songs if s["id"] in ids]})
        if kind == "playlists" and len(parts) == 5:
            playlist = dict(doc["results"]["playlists"]["data"][0])
            playlist["id"] = parts[4]
            playlist["relationships"] = {"tracks": {"href": "/v1/catalog/%s/playlists/%s/tracks" % (storefront, parts[4]),
                                                    "data": songs}}
            return self.send(200, {"data": [playlist]})
        return self.send(404, {"errors": [{"id": "X", "title": "Resource Not Found",
                                           "detail": "Resource with requested id was not found",
                                           "status": "404", "code": "40400"}]})


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0
    server = ThreadingHTTPServer((PREVIEWS or "127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sys.stdin.read()  # returns at EOF: the parent has gone
    except KeyboardInterrupt:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
